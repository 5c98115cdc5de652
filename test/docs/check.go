package docs

import (
	"fmt"
	"strings"
)

// Drift is a step whose output is not what the text shows.
type Drift struct {
	File string
	Step Step
	Got  []string
	Err  error
}

func (d Drift) String() string {
	if d.Err != nil {
		return fmt.Sprintf("%s:%d: $ %s: %v", d.File, d.Step.Line, d.Step.Cmd, d.Err)
	}
	return fmt.Sprintf("%s:%d: $ %s\n--- the text shows:\n%s\n--- the command printed:\n%s",
		d.File, d.Step.Line, d.Step.Cmd, strings.Join(d.Step.Want, "\n"), strings.Join(d.Got, "\n"))
}

// Run runs an example's setup commands and steps in the session, in order,
// and returns the steps whose output differs from the text's (and the
// setup commands that failed).
func Run(s *Session, ex Example) []Drift {
	var drifts []Drift
	for _, cmd := range ex.Setup {
		if out, rc, err := s.Run(cmd); err != nil || rc != 0 {
			drifts = append(drifts, Drift{File: ex.File, Step: Step{Line: ex.Line, Cmd: cmd},
				Err: fmt.Errorf("setup: exit %d, %v: %s", rc, err, strings.Join(out, "\n"))})
		}
	}
	for _, st := range ex.Steps {
		got, _, err := s.Run(st.Cmd)
		if err != nil {
			drifts = append(drifts, Drift{File: ex.File, Step: st, Err: err})
			continue
		}
		if !Match(st.Want, got) {
			drifts = append(drifts, Drift{File: ex.File, Step: st, Got: got})
		}
	}
	return drifts
}
