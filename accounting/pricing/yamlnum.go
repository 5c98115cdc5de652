package pricing

import (
	"fmt"
	"strconv"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
)

// MaxCardBytes bounds a rate card file: a real card is a few kilobytes; a
// larger file is a mistake (or an attack on the parser), refused unread.
const MaxCardBytes = 1 << 20

// maxExactDigits is how many significant digits a YAML float keeps: a
// float64 holds every decimal of up to 15 significant digits exactly
// enough to be written back unchanged.
const maxExactDigits = 15

// checkNumbers refuses unquoted numbers that a YAML reader would not keep
// exactly as written: a float64 holds about 15 significant digits, so
// `perGPUHour: 0.123456789012345678901` (or `2.1000000000000001`, or
// `1e400`) reaches the card rounded, silently. Each is reported with its
// field and the fix (quote it). Exponents, hexadecimal, octal, .inf and
// .nan are refused for the same reason: a price is a plain decimal.
func checkNumbers(b []byte) ValidationError {
	var doc yaml3.Node
	if err := yaml3.Unmarshal(b, &doc); err != nil {
		return nil // the strict decode reports the syntax error
	}
	var errs ValidationError
	var walk func(n *yaml3.Node, path string)
	walk = func(n *yaml3.Node, path string) {
		switch n.Kind {
		case yaml3.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml3.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i].Value
				p := key
				if path != "" {
					p = path + "." + key
				}
				walk(n.Content[i+1], p)
			}
		case yaml3.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml3.ScalarNode:
			if n.Style&(yaml3.SingleQuotedStyle|yaml3.DoubleQuotedStyle) != 0 {
				return
			}
			if msg := inexactNumber(n); msg != "" {
				errs = append(errs, FieldError{path, msg})
			}
		}
	}
	walk(&doc, "")
	return errs
}

// inexactNumber says why an unquoted scalar would not be read as written,
// or returns "".
func inexactNumber(n *yaml3.Node) string {
	switch n.ShortTag() {
	case "!!float", "!!int":
	default:
		return ""
	}
	v := n.Value
	plain := strings.TrimLeft(v, "+-")
	whole, frac, _ := strings.Cut(plain, ".")
	for _, part := range []string{whole, frac} {
		for _, r := range part {
			if r < '0' || r > '9' {
				return fmt.Sprintf("%s is not a plain decimal; write it as one, in quotes (e.g. \"2.50\")", v)
			}
		}
	}
	if whole == "" {
		return fmt.Sprintf("%s is not a plain decimal; write it as one, in quotes (e.g. \"0.50\")", v)
	}
	if n.ShortTag() == "!!int" {
		if len(whole) > 1 && whole[0] == '0' {
			return fmt.Sprintf("%s has a leading zero, which YAML may read as an octal number; write %s", v, strings.TrimLeft(whole, "0"))
		}
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Sprintf("%s is too large a number to be read exactly", v)
		}
		return ""
	}
	if digits := strings.Trim(whole+frac, "0"); len(digits) <= maxExactDigits {
		return ""
	}
	return fmt.Sprintf("%s has more than %d significant digits, which YAML reads as a float and rounds; quote it: %q", v, maxExactDigits, v)
}
