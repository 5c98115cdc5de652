package focuscheck

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// pair is one key-value pair of a Key-Value Format column.
type pair struct {
	key  string
	kind string // string, number, bool, null, object, array
	str  string
}

// keyValue reads a Key-Value Format value (key_value_format): a serialized
// JSON object (ECMA-404) with unique keys whose values are numbers,
// strings, true, false or null, never objects or arrays. It returns the
// pairs and what breaks those rules.
func keyValue(v string) ([]pair, []string) {
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, []string{"is a serialized JSON object"}
	}
	var out []pair
	var errs []string
	seen := map[string]bool{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return out, append(errs, "is a serialized JSON object")
		}
		key, _ := kt.(string)
		if seen[key] {
			errs = append(errs, "keys are unique within the object ("+key+")")
		}
		seen[key] = true
		vt, err := dec.Token()
		if err != nil {
			return out, append(errs, "is a serialized JSON object")
		}
		p := pair{key: key}
		switch x := vt.(type) {
		case string:
			p.kind, p.str = "string", x
		case json.Number:
			p.kind = "number"
		case bool:
			p.kind = "bool"
		case nil:
			p.kind = "null"
		case json.Delim:
			p.kind = map[json.Delim]string{'{': "object", '[': "array"}[x]
			errs = append(errs, "values are not objects or arrays ("+key+")")
			if err := skip(dec); err != nil {
				return out, append(errs, "is a serialized JSON object")
			}
		}
		out = append(out, p)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return out, append(errs, "is a serialized JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		errs = append(errs, "is one serialized JSON object (nothing after it)")
	}
	return out, errs
}

// skip reads the rest of an object or array whose opening delimiter was read.
func skip(dec *json.Decoder) error {
	for depth := 1; depth > 0; {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}
