package app

import (
	"reflect"
	"testing"
)

// TestUseCasesTakeTypedRequests: no use case (an exported method of Env)
// takes the CLI's key=value map; the commands parse it at their edge
// (the Parse functions) into a typed request, which the API builds from
// JSON as well.
func TestUseCasesTakeTypedRequests(t *testing.T) {
	kv := reflect.TypeOf(map[string]string(nil))
	env := reflect.TypeOf(&Env{})
	for i := range env.NumMethod() {
		m := env.Method(i)
		for j := range m.Type.NumIn() {
			if m.Type.In(j) == kv {
				t.Errorf("Env.%s takes a map[string]string: parse it into a request at the edge (a Parse function)", m.Name)
			}
		}
	}
}
