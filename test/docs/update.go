package docs

import "strings"

// Rewrite returns the document src with the output of each drift put in
// place of the text's (an update of the text to what the commands print
// now, for a person to review with git diff). A step whose text has an
// Elision is left as it is: which lines it stands for is the writer's
// choice.
func Rewrite(src string, drifts []Drift) string {
	lines := strings.Split(src, "\n")
	// from the end, so that the line numbers of the earlier steps hold
	for i := len(drifts) - 1; i >= 0; i-- {
		d := drifts[i]
		if d.Err != nil || d.Step.Next == 0 || hasElision(d.Step.Want) {
			continue
		}
		from := d.Step.Next - 1
		to := from + len(d.Step.Want)
		if to > len(lines) {
			continue
		}
		got := make([]string, len(d.Got))
		for k, l := range d.Got {
			got[k] = strings.TrimRight(l, " \t") // Match ignores them; the text has none
		}
		repl := append(append(append([]string{}, lines[:from]...), got...), lines[to:]...)
		lines = repl
	}
	return strings.Join(lines, "\n")
}

func hasElision(ls []string) bool {
	for _, l := range ls {
		if strings.TrimSpace(l) == Elision {
			return true
		}
	}
	return false
}
