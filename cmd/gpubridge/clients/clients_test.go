package clients_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients/clientstest"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// testConfig: a fake slurmrestd with a token file, fake databases.
func testConfig(t *testing.T, srv *clientstest.Slurm, tokenFile string) config.Config {
	c := config.Default()
	c.Cluster = "fake"
	c.SlurmRest.URL = srv.URL
	c.SlurmRest.TokenFile = tokenFile
	c.SlurmRest.Timeout.Duration = 2 * time.Second
	c.Database.DSN = "gpubridge:pw@tcp(127.0.0.1:3306)/gpubridge"
	c.SlurmDB.DSN = "ro:pw@tcp(127.0.0.1:3306)/slurm_acct_db"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func fakeOptions(db *clientstest.DB) clients.Options {
	return clients.Options{ConnectDB: db.Connector, PrepareDB: clientstest.Prepare}
}

// The clients are made with the Set and connect nothing until used; a
// database that is down fails the statement, and the next statement
// connects, so a dependency that comes back is picked up.
func TestClientsConnectAtFirstUseAndRetry(t *testing.T) {
	srv := clientstest.NewSlurm("fake", "tok-1")
	defer srv.Close()
	tok := filepath.Join(t.TempDir(), "jwt")
	write(t, tok, "tok-1\n")
	db := &clientstest.DB{}
	db.SetDown(true)
	s := clients.New(testConfig(t, srv, tok), fakeOptions(db))
	defer s.Close()
	ctx := context.Background()
	if _, err := s.DB(ctx); err != nil {
		t.Fatalf("DB with the database down = %v; want the pool (it connects at its first statement)", err)
	}
	if _, err := s.Slurm(ctx); err != nil {
		t.Fatalf("Slurm = %v; want the client (it negotiates at its first request)", err)
	}
	if b := s.Built(); len(b) != 0 || srv.Requests() != 0 {
		t.Fatalf("reached before a statement or a request: %v, %d requests", b, srv.Requests())
	}
	if err := s.CheckDB(ctx); !errors.Is(err, clientstest.ErrDown) {
		t.Fatalf("CheckDB with the database down = %v; want ErrDown", err)
	}
	db.SetDown(false)
	if err := s.CheckDB(ctx); err != nil {
		t.Fatalf("CheckDB after it came back: %v", err)
	}
	if err := s.CheckSlurm(ctx); err != nil {
		t.Fatalf("CheckSlurm: %v", err)
	}
	got := s.Built()
	slices.Sort(got)
	if !slices.Equal(got, []string{clients.NameDatabase, clients.NameSlurmRest}) {
		t.Fatalf("built = %v", got)
	}
	if db.Opened() != 2 {
		t.Fatalf("made %d pools; want 2 (gpubridge's and slurmdbd's database), the failed statement none", db.Opened())
	}
}

// The schema is prepared before the pool's first connection: a refusal
// (an empty database, a foreign one) is the error of the statement, no
// connection is handed out, and the next statement prepares again.
func TestPoolPreparesBeforeFirstConnection(t *testing.T) {
	srv := clientstest.NewSlurm("fake", "t")
	defer srv.Close()
	c := testConfig(t, srv, "")
	c.SlurmRest.Token = "t"
	var calls atomic.Int32
	refuse := atomic.Bool{}
	refuse.Store(true)
	db := &clientstest.DB{}
	o := fakeOptions(db)
	o.PrepareDB = func(ctx context.Context, _ *sqlx.DB, p sqldb.Policy) (sqldb.Schema, error) {
		calls.Add(1)
		if p.InitEmpty {
			t.Error("serve's policy was not kept: InitEmpty")
		}
		if refuse.Load() {
			return sqldb.Schema{Kind: sqldb.Empty}, fmt.Errorf("database \"x\": %w", sqldb.ErrNoSchema)
		}
		return sqldb.Schema{Kind: sqldb.Gpubridge}, nil
	}
	s := clients.New(c, o)
	defer s.Close()
	ctx := context.Background()
	p, err := s.DB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PingContext(ctx); !errors.Is(err, sqldb.ErrNoSchema) {
		t.Fatalf("first statement on an empty database = %v; want ErrNoSchema", err)
	}
	if slices.Contains(s.Built(), clients.NameDatabase) {
		t.Fatal("a refused database counts as reached")
	}
	refuse.Store(false)
	for range 3 {
		if err := p.PingContext(ctx); err != nil {
			t.Fatalf("statement once the schema is there: %v", err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("prepared %d times; want 2 (the refusal, then once)", n)
	}
	if !slices.Contains(s.Built(), clients.NameDatabase) {
		t.Fatal("the prepared database does not count as reached")
	}
}

// BuiltSlurm is the client once a request negotiated, without connecting;
// nil before and after Close. Sacctmgr is reconcile.sacctmgr's runner,
// nil when unset, and a reload makes the runner of the new setting.
func TestBuiltSlurmAndSacctmgr(t *testing.T) {
	srv := clientstest.NewSlurm("fake", "t")
	defer srv.Close()
	c := testConfig(t, srv, "")
	c.SlurmRest.Token = "t"
	s := clients.New(c, fakeOptions(&clientstest.DB{}))
	if s.BuiltSlurm() != nil || len(s.Built()) != 0 {
		t.Fatalf("BuiltSlurm before any use = %v (built %v); want nil, nothing built", s.BuiltSlurm(), s.Built())
	}
	if s.Sacctmgr() != nil {
		t.Fatalf("Sacctmgr without reconcile.sacctmgr = %v; want nil", s.Sacctmgr())
	}
	cl, err := s.Slurm(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := s.BuiltSlurm(); got != nil {
		t.Fatalf("BuiltSlurm before the client's first request = %p; want nil", got)
	}
	if err := s.CheckSlurm(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.BuiltSlurm(); got != cl {
		t.Fatalf("BuiltSlurm after a request = %p; want the client %p", got, cl)
	}
	c2 := c
	c2.Reconcile.Sacctmgr = "ssh slurm-admin sacctmgr"
	n, _, err := s.Derive(c2)
	if err != nil {
		t.Fatal(err)
	}
	if r := n.Sacctmgr(); r == nil || r.String() != "ssh slurm-admin sacctmgr" || r.Cluster != "fake" {
		t.Fatalf("Sacctmgr after the reload = %v; want ssh slurm-admin sacctmgr for cluster fake", r)
	}
	if n.BuiltSlurm() != cl {
		t.Fatal("the reload (slurmrestd unchanged) does not share the built client")
	}
	s.Close()
	if s.BuiltSlurm() != nil {
		t.Fatal("BuiltSlurm after Close is not nil")
	}
}

// Many concurrent first statements prepare the schema once, on one pool.
func TestConcurrentFirstUsePreparesOnce(t *testing.T) {
	srv := clientstest.NewSlurm("fake", "t")
	defer srv.Close()
	db := &clientstest.DB{}
	c := testConfig(t, srv, "")
	c.SlurmRest.Token = "t"
	var prepared atomic.Int32
	o := fakeOptions(db)
	o.PrepareDB = func(ctx context.Context, d *sqlx.DB, p sqldb.Policy) (sqldb.Schema, error) {
		prepared.Add(1)
		time.Sleep(20 * time.Millisecond) // the others arrive meanwhile
		return clientstest.Prepare(ctx, d, p)
	}
	s := clients.New(c, o)
	defer s.Close()
	var wg sync.WaitGroup
	pools := make([]*sqlx.DB, 16)
	for i := range pools {
		wg.Go(func() {
			p, err := s.DB(context.Background())
			if err == nil {
				err = p.PingContext(context.Background())
			}
			if err != nil {
				t.Error(err)
			}
			pools[i] = p
		})
	}
	wg.Wait()
	if n := prepared.Load(); n != 1 {
		t.Fatalf("prepared %d times; want 1", n)
	}
	for _, p := range pools[1:] {
		if p != pools[0] {
			t.Fatal("callers got different pools")
		}
	}
}

// A statement waiting behind a slow preparation gives up with its context.
func TestWaitingCallerHonoursContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	c := config.Default()
	c.Database.DSN = "u:p@tcp(127.0.0.1:1)/x"
	db := &clientstest.DB{}
	s := clients.New(c, clients.Options{
		ConnectDB: db.Connector,
		PrepareDB: func(ctx context.Context, _ *sqlx.DB, _ sqldb.Policy) (sqldb.Schema, error) {
			close(started)
			<-release
			return sqldb.Schema{}, errors.New("never mind")
		},
	})
	p, err := s.DB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	go p.PingContext(context.Background())
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := p.PingContext(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second caller = %v; want its deadline", err)
	}
}

// The token file's content is the token sent, read at the build; Derive
// replaces only the clients whose settings changed, file contents included,
// and CloseReplaced closes exactly the replaced ones.
func TestDeriveRebuildsWhatChanged(t *testing.T) {
	srv := clientstest.NewSlurm("fake", "tok-1")
	defer srv.Close()
	dir := t.TempDir()
	tok := filepath.Join(dir, "jwt")
	write(t, tok, "tok-1\n")
	db := &clientstest.DB{}
	c := testConfig(t, srv, tok)
	old := clients.New(c, fakeOptions(db))
	ctx := context.Background()
	for _, check := range []func(context.Context) error{old.CheckSlurm, old.CheckDB, old.CheckSlurmDB} {
		if err := check(ctx); err != nil {
			t.Fatal(err)
		}
	}
	oldDB, _ := old.DB(ctx)

	// Same configuration, same files: nothing changes.
	same, changed, err := old.Derive(c)
	if err != nil || len(changed) != 0 {
		t.Fatalf("Derive(same) changed %v, %v; want nothing", changed, err)
	}
	if p, _ := same.DB(ctx); p != oldDB {
		t.Fatal("an unchanged database got a new pool")
	}

	// The token is rotated in its file, and the server revokes the old one.
	write(t, tok, "tok-2\n")
	srv.SetToken("tok-2")
	if err := old.CheckSlurm(ctx); !errors.Is(err, slurmrest.ErrUnauthorized) {
		t.Fatalf("old client after the rotation = %v; want unauthorized", err)
	}
	next, changed, err := old.Derive(c)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(changed, []string{clients.NameSlurmRest}) {
		t.Fatalf("changed = %v; want only slurmrestd", changed)
	}
	if err := next.CheckSlurm(ctx); err != nil {
		t.Fatalf("new client with the rotated token: %v", err)
	}
	if p, _ := next.DB(ctx); p != oldDB {
		t.Fatal("the database pool was rebuilt though its DSN did not change")
	}
	old.CloseReplaced(next)
	if err := oldDB.Ping(); err != nil {
		t.Fatalf("a shared pool was closed: %v", err)
	}
	if _, err := old.Slurm(ctx); !errors.Is(err, clients.ErrClosed) {
		t.Fatalf("replaced slurmrestd client = %v; want ErrClosed", err)
	}

	// A new DSN: a new pool, and the old one is closed.
	c2 := c
	c2.Database.DSN = "gpubridge:pw@tcp(127.0.0.1:3306)/gpubridge2"
	third, changed, err := next.Derive(c2)
	if err != nil || !slices.Equal(changed, []string{clients.NameDatabase}) {
		t.Fatalf("Derive(new DSN) = %v, %v; want database", changed, err)
	}
	next.CloseReplaced(third)
	if err := oldDB.Ping(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("replaced pool still open: %v", err)
	}
	if p, err := third.DB(ctx); err != nil || p == oldDB {
		t.Fatalf("third.DB = %v, %v; want a new pool", p, err)
	}
	if d := db.DSNs(); d[len(d)-1] != c2.Database.DSN {
		t.Fatalf("last DSN opened %q; want %q", d[len(d)-1], c2.Database.DSN)
	}
	third.Close()
}

// A token file that cannot be read makes Derive fail, so a reload keeps
// the running clients.
func TestDeriveRefusesUnreadableFile(t *testing.T) {
	srv := clientstest.NewSlurm("fake", "t")
	defer srv.Close()
	dir := t.TempDir()
	tok := filepath.Join(dir, "jwt")
	write(t, tok, "t")
	c := testConfig(t, srv, tok)
	s := clients.New(c, fakeOptions(&clientstest.DB{}))
	defer s.Close()
	for name, edit := range map[string]func(*config.Config){
		"missing": func(c *config.Config) { c.SlurmRest.TokenFile = filepath.Join(dir, "nope") },
		"empty": func(c *config.Config) {
			write(t, filepath.Join(dir, "empty"), "\n")
			c.SlurmRest.TokenFile = filepath.Join(dir, "empty")
		},
		"bad DSN": func(c *config.Config) { c.Database.DSN = "not a dsn" },
	} {
		t.Run(name, func(t *testing.T) {
			c2 := c
			edit(&c2)
			if _, _, err := s.Derive(c2); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestPermanent(t *testing.T) {
	cases := map[string]struct {
		err  error
		want bool
	}{
		"config":       {config.ValidationError{{Field: "database.dsn", Msg: "unset"}}, true},
		"no schema":    {errors.Join(errors.New("db x"), sqldb.ErrNoSchema), true},
		"unauthorized": {slurmrest.ErrUnauthorized, true},
		"refused":      {clientstest.ErrDown, false},
		"deadline":     {context.DeadlineExceeded, false},
	}
	for name, c := range cases {
		if got := clients.Permanent(c.err); got != c.want {
			t.Errorf("%s: Permanent = %v; want %v", name, got, c.want)
		}
	}
}

func TestPlainJWTWarning(t *testing.T) {
	cases := map[string]bool{
		"http://127.0.0.1:6820":      false,
		"http://localhost:6820":      false,
		"http://[::1]:6820":          false,
		"https://slurm.example:6820": false,
		"http://slurm.example:6820":  true,
		"http://10.0.0.5:6820":       true,
	}
	for u, warn := range cases {
		if got := clients.PlainJWTWarning(u) != ""; got != warn {
			t.Errorf("%s: warning = %v; want %v", u, got, warn)
		}
	}
}
