package docs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Session runs one document's commands in order, as one reader typing
// them into one shell would: each command sees the variables, the working
// directory and the exit status ($?) the one before it left. Standard input
// is empty (a confirmation prompt reads end of input, which counts as no);
// standard output and standard error are read together, as a terminal
// shows them. A command left running in the background (`... &`) is killed
// by Close.
type Session struct {
	Dir     string        // the working directory of the first command
	Env     []string      // the environment of the first command
	Timeout time.Duration // the longest one command may run
	state   string        // a directory of the session's own: variables, cwd, $?
	groups  []int         // the process groups started, for Close
}

// NewSession makes a session in dir with env; its state lives in a
// directory of its own under tmp.
func NewSession(dir string, env []string, tmp string) (*Session, error) {
	st, err := os.MkdirTemp(tmp, "session")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(st, "cwd"), []byte(dir+"\n"), 0o644); err != nil {
		return nil, err
	}
	return &Session{Dir: dir, Env: env, Timeout: timeout(), state: st}, nil
}

// asUser is a document's comment that a command runs as another user
// ("$ sbatch ... # as frank"): the command sees DOCTEST_USER=frank, which the
// harness's wrappers of the cluster's commands honour.
var asUser = regexp.MustCompile(`#\s*as ([a-z][a-z0-9_-]*)\b`)

// wrapper runs the command between restoring and saving the shell's state.
const wrapper = `cd "$(cat "$S/cwd")" || exit 97
set -a
. "$S/vars" 2>/dev/null
__doctest_rc=$(cat "$S/rc" 2>/dev/null || echo 0)
(exit $__doctest_rc)
%s
__doctest_rc=$?
unset DOCTEST_USER
export -p >"$S/vars.new" 2>/dev/null && mv "$S/vars.new" "$S/vars"
pwd >"$S/cwd"
echo $__doctest_rc >"$S/rc"
exit $__doctest_rc
`

// Run runs one command and returns its output's lines and exit status.
func (s *Session) Run(cmd string) ([]string, int, error) {
	out, err := os.CreateTemp(s.state, "out")
	if err != nil {
		return nil, 0, err
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", fmt.Sprintf(wrapper, cmd))
	c.Dir = s.Dir
	c.Env = append(append([]string{}, s.Env...), "S="+s.state)
	if m := asUser.FindStringSubmatch(cmd); m != nil {
		c.Env = append(c.Env, "DOCTEST_USER="+m[1])
	}
	c.Stdout, c.Stderr = out, out
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	err = c.Start()
	if err != nil {
		return nil, 0, err
	}
	s.groups = append(s.groups, c.Process.Pid)
	err = c.Wait()
	rc := c.ProcessState.ExitCode()
	if ctx.Err() != nil {
		return nil, rc, fmt.Errorf("%q: still running after %s", cmd, s.Timeout)
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		return nil, rc, err
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		return nil, rc, err
	}
	text := strings.TrimRight(string(b), "\n")
	if text == "" {
		return nil, rc, nil
	}
	return trimBlank(strings.Split(text, "\n")), rc, nil
}

// Close kills what the session's commands left running and removes its
// state.
func (s *Session) Close() {
	for _, g := range s.groups {
		_ = syscall.Kill(-g, syscall.SIGTERM)
	}
	os.RemoveAll(s.state)
}

// timeout is the longest one command may run: DOCTEST_TIMEOUT (a Go
// duration) or 20 seconds (a document's command that waits longer, such as
// a daemon started in the foreground, fails rather than slow the suite).
func timeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("DOCTEST_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return 20 * time.Second
}
