package tenant

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v2"
)

// MaxFileBytes bounds a tenants file (4 MiB: some ten thousand tenants);
// a larger one is refused before it is parsed.
const MaxFileBytes = 4 << 20

// yamlNode is a tenants file as YAML itself reads it: the kind YAML 1.1
// resolves each scalar to (the JSON form ParseFile works on has lost it)
// and the text as written. It lets ParseFile refuse values that YAML
// silently turns into something else: `name: yes` (the boolean true),
// `h100: 16.0` (a float), `h100: 010` (octal 8), `monthlyBudget:
// 0.10000000000000000555` (the float 0.1). It is read by the same parser
// as the JSON form (go.yaml.in/yaml/v2, under sigs.k8s.io/yaml), so both
// see the same document.
type yamlNode struct {
	kind string // map, list, null, bool, int, float, str
	raw  string // a scalar as written
	m    map[string]*yamlNode
	l    []*yamlNode
}

func (n *yamlNode) UnmarshalYAML(unmarshal func(any) error) error {
	var v any
	if err := unmarshal(&v); err != nil {
		return err
	}
	switch v.(type) {
	case map[any]any:
		n.kind = "map"
		return unmarshal(&n.m)
	case []any:
		n.kind = "list"
		return unmarshal(&n.l)
	case nil:
		n.kind = "null"
	case bool:
		n.kind = "bool"
	case int, int64, uint64:
		n.kind = "int"
	case float64:
		n.kind = "float"
	default:
		n.kind = "str"
	}
	// Decoding a scalar into a string gives its text as written.
	var s string
	_ = unmarshal(&s)
	n.raw = s
	return nil
}

// readYAMLKinds parses b for its scalar kinds; nil when it cannot (the
// JSON pass reports why).
func readYAMLKinds(b []byte) *yamlNode {
	var n yamlNode
	if err := yaml.Unmarshal(b, &n); err != nil {
		return nil
	}
	return &n
}

// get returns the value of key k of a mapping (nil when n is nil or not
// a mapping).
func (n *yamlNode) get(k string) *yamlNode {
	if n == nil {
		return nil
	}
	return n.m[k]
}

// item returns element i of a list.
func (n *yamlNode) item(i int) *yamlNode {
	if n == nil || i >= len(n.l) {
		return nil
	}
	return n.l[i]
}

// What a field expects, for kindProblem.
const (
	wantName   = "name"
	wantText   = "text"
	wantCount  = "count"
	wantAmount = "amount"
)

// kindProblem says what is wrong when YAML reads the scalar n as
// something other than what was written for a field that wants a name,
// text, a count or an amount; parsed is the text the JSON form carries.
// "" means nothing is wrong here (the field's own parser still checks
// the value).
func kindProblem(n *yamlNode, want, parsed string) string {
	if n == nil {
		return ""
	}
	switch n.kind {
	case "bool":
		switch want {
		case wantName, wantText:
			return fmt.Sprintf("%s is read by YAML as the boolean %s, not as text; write it in quotes: %q", n.raw, parsed, n.raw)
		case wantCount:
			return fmt.Sprintf("%s is read by YAML as a boolean; give a whole number such as 4", n.raw)
		}
		return fmt.Sprintf("%s is read by YAML as a boolean; give an amount such as \"2500.00\"", n.raw)
	case "int":
		if n.raw == parsed || want == wantName {
			return ""
		}
		if want == wantText {
			return fmt.Sprintf("%s is read by YAML as the number %s; write it in quotes: %q", n.raw, parsed, n.raw)
		}
		return fmt.Sprintf("%s is read by YAML as the number %s (octal, hexadecimal or with '_'); write plain decimal digits", n.raw, parsed)
	case "float":
		switch want {
		case wantText:
			return fmt.Sprintf("%s is read by YAML as the number %s; write it in quotes: %q", n.raw, parsed, n.raw)
		case wantCount:
			if !strings.ContainsAny(parsed, ".eEnN") { // 16.0 reads as 16: integral, but not written as a whole number
				return fmt.Sprintf("%s is a decimal number; give a whole number without a decimal point, such as %s", n.raw, parsed)
			}
		case wantAmount:
			// An amount is judged as written: YAML's float may have
			// dropped digits (0.10000000000000000555 reads as 0.1).
			written, msg := ParseMoney(n.raw)
			if msg != "" {
				return msg
			}
			if read, msg := ParseMoney(parsed); msg != "" || read != written {
				return fmt.Sprintf("%s (unquoted) is read by YAML as the number %s; write the amount in quotes: %q", n.raw, parsed, n.raw)
			}
		}
	}
	return ""
}
