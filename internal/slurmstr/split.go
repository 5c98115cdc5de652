package slurmstr

// SplitTop splits s at commas that are not inside open/close brackets:
// SplitTop("gpu:h100:2(S:0,1),gpu:a:1", '(', ')') gives
// ["gpu:h100:2(S:0,1)", "gpu:a:1"]. An unmatched closing bracket is ignored.
func SplitTop(s string, open, close rune) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case open:
			depth++
		case close:
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
