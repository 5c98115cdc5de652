package sacctmgr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Assoc is a user association to create under an existing account.
type Assoc struct {
	Account    string
	User       string
	QOS        []string
	DefaultQOS string
	// DefaultAccount is set when the user does not exist yet: the load
	// creates the user record with it. Empty for an existing user (the
	// load then leaves the user's default alone).
	DefaultAccount string
}

// Runner runs sacctmgr for one cluster.
type Runner struct {
	// Argv is the command that runs sacctmgr: ["sacctmgr"], or
	// ["ssh", "slurm-admin", "sacctmgr"].
	Argv    []string
	Cluster string
	// Parallel is how many loads run at once; 0 means 4. slurmdbd serves
	// them in parallel: 1,000 tenants x 3 users load in 2.1 s as two or
	// four files against 4.6 s as one (docs/scale.md).
	Parallel int
	// Timeout bounds one command; 0 means 10 minutes.
	Timeout time.Duration

	commands atomic.Int64
}

// Commands is how many sacctmgr commands the runner has started.
func (r *Runner) Commands() int64 { return r.commands.Load() }

// New returns a runner for a command line split on spaces; nil when the
// command is empty (no sacctmgr: everything goes through slurmrestd).
func New(command, cluster string) *Runner {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		return nil
	}
	return &Runner{Argv: argv, Cluster: cluster}
}

// String is the command line.
func (r *Runner) String() string { return strings.Join(r.Argv, " ") }

var nameRE = regexp.MustCompile(`^[a-z0-9_][a-z0-9_.-]*$`)

// LoadableName reports whether s is a Slurm object name that a load file
// and a name list carry as is: lower case (sacctmgr lowercases what
// follows a name in a load line, descriptions too, and replaces quotes,
// which is why accounts are not loaded), digits and _.-.
func LoadableName(s string) bool { return nameRE.MatchString(s) }

// AssocLoadable reports whether a load file carries the association
// exactly.
func AssocLoadable(a Assoc) bool {
	if !LoadableName(a.Account) || !LoadableName(a.User) || a.DefaultQOS != "" && !LoadableName(a.DefaultQOS) ||
		a.DefaultAccount != "" && !LoadableName(a.DefaultAccount) {
		return false
	}
	for _, q := range a.QOS {
		if !LoadableName(q) {
			return false
		}
	}
	return true
}

// File is the load file that creates the associations, grouped under
// their accounts (Parent lines) in the order of first appearance. Every
// association must be loadable (checked: an error names the first that
// is not).
func File(cluster string, assocs []Assoc) ([]byte, error) {
	if !LoadableName(cluster) {
		return nil, fmt.Errorf("sacctmgr load: cluster name %q cannot be written in a load file", cluster)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Cluster - '%s'\n", cluster)
	var order []string
	byAcct := map[string][]Assoc{}
	for _, a := range assocs {
		if !AssocLoadable(a) {
			return nil, fmt.Errorf("sacctmgr load: association %s (%s) has a name that a load file cannot carry", a.User, a.Account)
		}
		if _, ok := byAcct[a.Account]; !ok {
			order = append(order, a.Account)
		}
		byAcct[a.Account] = append(byAcct[a.Account], a)
	}
	for _, acct := range order {
		fmt.Fprintf(&b, "Parent - '%s'\n", acct)
		for _, a := range byAcct[acct] {
			fmt.Fprintf(&b, "User - '%s'", a.User)
			if a.DefaultAccount != "" {
				fmt.Fprintf(&b, ":DefaultAccount='%s'", a.DefaultAccount)
			}
			if len(a.QOS) > 0 {
				fmt.Fprintf(&b, ":QOS='%s'", strings.Join(a.QOS, ","))
			}
			if a.DefaultQOS != "" {
				fmt.Fprintf(&b, ":DefaultQOS='%s'", a.DefaultQOS)
			}
			b.WriteByte('\n')
		}
	}
	return b.Bytes(), nil
}

// Chunks splits n objects into at most k contiguous runs of nearly equal
// size, never splitting a run of objects with the same key (a user's
// associations stay in one load: the first of them creates the user).
func Chunks(n, k int, key func(i int) string) [][2]int {
	if n == 0 {
		return nil
	}
	k = max(1, min(k, n))
	var out [][2]int
	start := 0
	for c := 1; c <= k && start < n; c++ {
		end := n * c / k
		if c == k {
			end = n
		}
		for end < n && end > start && key(end) == key(end-1) {
			end++
		}
		if end <= start {
			continue
		}
		out = append(out, [2]int{start, end})
		start = end
	}
	if start < n {
		out[len(out)-1][1] = n
	}
	return out
}

// LoadAssocs creates the user associations under existing accounts, and
// the user records of those with a DefaultAccount: the associations split
// into Parallel load files loaded at once, a user's in one file (they
// must be next to each other). It returns the associations of the loads
// that failed (a failed load writes nothing: sacctmgr checks a file whole
// and commits only when all of it was added) with their errors joined;
// the others are created.
func (r *Runner) LoadAssocs(ctx context.Context, assocs []Assoc) ([]Assoc, error) {
	par := r.Parallel
	if par <= 0 {
		par = 4
	}
	user := func(i int) string { return assocs[i].User }
	chunks := Chunks(len(assocs), par, user)
	files := make([][]byte, len(chunks))
	for i, c := range chunks {
		f, err := File(r.Cluster, assocs[c[0]:c[1]])
		if err != nil {
			return assocs, err
		}
		files[i] = f
	}
	errs := make([]error, len(chunks))
	var wg sync.WaitGroup
	for i, c := range chunks {
		wg.Go(func() {
			if err := r.run(ctx, files[i], "-i", "load", "file=/dev/stdin"); err != nil {
				errs[i] = fmt.Errorf("load %d user associations (%s ... %s): %w", c[1]-c[0], user(c[0]), user(c[1]-1), err)
			}
		})
	}
	wg.Wait()
	var failed []Assoc
	for i, c := range chunks {
		if errs[i] != nil {
			failed = append(failed, assocs[c[0]:c[1]]...)
		}
	}
	return failed, errors.Join(errs...)
}

// maxArgBytes bounds one delete command's name list.
const maxArgBytes = 64 << 10

// DeleteQOS deletes the QOS: one `sacctmgr -i delete qos name=...` per
// 64 KiB of names, each all or nothing. On a failure it returns the names
// of that command and of those not run, with the error.
func (r *Runner) DeleteQOS(ctx context.Context, names []string) ([]string, error) {
	return r.deleteNames(ctx, "qos", names)
}

// DeleteAccounts deletes the accounts with every association under them,
// as DeleteQOS does QOS.
func (r *Runner) DeleteAccounts(ctx context.Context, names []string) ([]string, error) {
	return r.deleteNames(ctx, "account", names)
}

func (r *Runner) deleteNames(ctx context.Context, kind string, names []string) ([]string, error) {
	for _, n := range names {
		if !LoadableName(n) {
			return names, fmt.Errorf("sacctmgr delete %s: %q is not a name a name list carries", kind, n)
		}
	}
	for len(names) > 0 {
		size, n := 0, 0
		for n < len(names) && (n == 0 || size+len(names[n])+1 <= maxArgBytes) {
			size += len(names[n]) + 1
			n++
		}
		if err := r.run(ctx, nil, "-i", "delete", kind, "name="+strings.Join(names[:n], ",")); err != nil {
			return names, fmt.Errorf("delete %d %s (%s ... %s): %w", n, kind, names[0], names[n-1], err)
		}
		names = names[n:]
	}
	return nil, nil
}

// run runs sacctmgr with args and stdin; a failure carries sacctmgr's
// error lines (a few, shortened), not its whole output.
func (r *Runner) run(ctx context.Context, stdin []byte, args ...string) error {
	if len(r.Argv) == 0 {
		return errors.New("sacctmgr: no command")
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.commands.Add(1)
	cmd := exec.CommandContext(cctx, r.Argv[0], append(r.Argv[1:], args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out errorLines
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w after %s", err, timeout)
		}
		return fmt.Errorf("%s %s: %w%s", r.String(), strings.Join(args[:min(3, len(args))], " "), err, out.summary())
	}
	return nil
}

// errorLines keeps the lines of sacctmgr's output that say what went
// wrong (a load prints a table of everything it adds: hundreds of KB).
type errorLines struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	more    int
}

const keptErrorLines = 4

var errorLineRE = regexp.MustCompile(`(?i)error|problem|unknown|invalid|not |nothing|refus|denied|can't|cannot|fail`)

func (w *errorLines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data := append(w.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		w.keep(string(data[:i]))
		data = data[i+1:]
	}
	if len(data) > 4096 { // a line that never ends: keep its start
		w.keep(string(data[:4096]))
		data = nil
	}
	w.partial = append(w.partial[:0], data...)
	return len(p), nil
}

func (w *errorLines) keep(line string) {
	line = strings.TrimSpace(line)
	if line == "" || !errorLineRE.MatchString(line) {
		return
	}
	if len(w.lines) == keptErrorLines {
		w.more++
		return
	}
	if len(line) > 200 {
		line = line[:200] + "..."
	}
	w.lines = append(w.lines, line)
}

func (w *errorLines) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.keep(string(w.partial))
		w.partial = nil
	}
	if len(w.lines) == 0 {
		return ""
	}
	s := ": " + strings.Join(w.lines, "; ")
	if w.more > 0 {
		s += fmt.Sprintf("; and %d more line(s)", w.more)
	}
	return s
}
