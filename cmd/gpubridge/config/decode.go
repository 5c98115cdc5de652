package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/gpubridge/gpubridge/internal/kv"
)

// decode reads the YAML document b over c and reports every problem at
// once, each at its field path: a key that is not one of its place's
// (keys are case-sensitive: `Listen` is not `listen`), with the key meant
// when one is close, and a value of the wrong type. The fields whose
// values are right are set; the others keep what c had.
func decode(b []byte, c *Config) error {
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	if doc == nil {
		return nil // an empty file
	}
	var errs ValidationError
	walk(reflect.ValueOf(c).Elem(), doc, "", &errs)
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b FieldError) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// composite: walk decodes t's parts one by one (each error at its own
// path); a scalar, or a type that reads itself (Duration), is decoded
// whole.
func composite(t reflect.Type) bool {
	if reflect.PointerTo(t).Implements(unmarshaler) {
		return false
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice:
		return true
	case reflect.Pointer:
		return composite(t.Elem())
	}
	return false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// walk sets v from data, the JSON form of the YAML at path.
func walk(v reflect.Value, data any, path string, errs *ValidationError) {
	t := v.Type()
	if data == nil || !composite(t) {
		leaf(v, data, path, errs)
		return
	}
	add := func(field, format string, a ...any) {
		*errs = append(*errs, FieldError{field, fmt.Sprintf(format, a...)})
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if !v.IsNil() {
			p.Elem().Set(v.Elem())
		}
		walk(p.Elem(), data, path, errs)
		v.Set(p)
	case reflect.Struct:
		m, ok := data.(map[string]any)
		if !ok {
			add(cmpOr(path, "(top)"), "is %s; want a mapping of keys", describe(data))
			return
		}
		keys, index := fieldsOf(t)
		for _, k := range sortedKeys(m) {
			i, ok := index[k]
			if !ok {
				msg := "unknown key" + kv.DidYouMean(k, keys)
				if kv.Suggest(k, keys) == "" {
					msg += "; the keys here: " + strings.Join(keys, ", ")
				}
				add(join(path, k), "%s", msg)
				continue
			}
			walk(v.Field(i), m[k], join(path, k), errs)
		}
	case reflect.Map:
		m, ok := data.(map[string]any)
		if !ok {
			add(path, "is %s; want a mapping", describe(data))
			return
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(t))
		}
		for _, k := range sortedKeys(m) {
			e := reflect.New(t.Elem()).Elem()
			if old := v.MapIndex(reflect.ValueOf(k)); old.IsValid() {
				e.Set(old)
			}
			walk(e, m[k], join(path, k), errs)
			v.SetMapIndex(reflect.ValueOf(k), e)
		}
	case reflect.Slice:
		a, ok := data.([]any)
		if !ok {
			add(path, "is %s; want a list", describe(data))
			return
		}
		s := reflect.MakeSlice(t, len(a), len(a))
		for i, x := range a {
			walk(s.Index(i), x, fmt.Sprintf("%s[%d]", path, i), errs)
		}
		v.Set(s)
	}
}

// leaf decodes data into v whole, as encoding/json does.
func leaf(v reflect.Value, data any, path string, errs *ValidationError) {
	b, err := json.Marshal(data)
	if err != nil {
		*errs = append(*errs, FieldError{path, err.Error()})
		return
	}
	p := reflect.New(v.Type())
	p.Elem().Set(v)
	if err := json.Unmarshal(b, p.Interface()); err != nil {
		*errs = append(*errs, FieldError{path, typeMessage(err, data, v.Type())})
		return
	}
	v.Set(p.Elem())
}

// typeMessage says what was wrong with a value.
func typeMessage(err error, data any, t reflect.Type) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	want := map[reflect.Kind]string{
		reflect.Bool: "true or false", reflect.String: "a string", reflect.Slice: "a list", reflect.Map: "a mapping",
		reflect.Int: "a whole number", reflect.Int64: "a whole number", reflect.Float64: "a number",
	}[t.Kind()]
	if want == "" {
		want = "a " + t.Kind().String()
	}
	if te.Field != "" {
		return fmt.Sprintf("%s: is %s; want %s", te.Field, te.Value, te.Type)
	}
	return fmt.Sprintf("is %s; want %s", describe(data), want)
}

// describe names a JSON value for an error: its text, or its kind.
func describe(data any) string {
	switch x := data.(type) {
	case string:
		return strconv.Quote(x)
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return "empty"
}

// fieldsOf lists a struct type's keys (json names) and their field
// indexes.
func fieldsOf(t reflect.Type) ([]string, map[string]int) {
	var keys []string
	index := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		keys = append(keys, name)
		index[name] = i
	}
	return keys, index
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
