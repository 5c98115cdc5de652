//go:build !(linux && cgo)

package device

import (
	"errors"
	"strings"
	"testing"
)

func TestStubHasNoNVML(t *testing.T) {
	_, err := Collect(Options{})
	if !errors.Is(err, ErrNoNVML) || !strings.Contains(err.Error(), "built without cgo") {
		t.Fatalf("Collect = %v, want ErrNoNVML saying the build has no cgo", err)
	}
}
