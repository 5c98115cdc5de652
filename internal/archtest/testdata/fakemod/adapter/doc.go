// Package adapter does I/O: it serves HTTP and uses core.
package adapter

import (
	"fmt"
	"net/http"

	"example.com/fakemod/core"
)

// Serve answers with a price.
func Serve(p int) {
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, core.Price(p)) })
}
