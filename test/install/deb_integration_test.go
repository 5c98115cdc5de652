//go:build integration

// Package install tests the production install of docs/install.md: the
// Debian package that `make deb` builds, installed into a fresh copy of the
// testbed's cached root (never the running testbed's root, never this
// host), and its daemon started with the packaged configuration pointed at
// the testbed.
package install

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestDebInstallAndServe builds the packages with `make packages`, installs the .deb
// with dpkg in a fresh root made from the testbed's cached tarball, checks
// what the package and its maintainer scripts made (the gpubridge system
// user, /etc/gpubridge with the configuration readable by its group only,
// the state directory for the guard table, man pages, completion, the
// guard script), verifies the unit with systemd-analyze, starts
// `gpubridge serve` as the unit would (user gpubridge, the packaged
// configuration, edited the way docs/install.md says, pointed at the
// testbed's slurmrestd and MariaDB) and waits for its sd_notify READY=1,
// /healthz and the leader lock, stops it with SIGTERM, then removes and
// purges the package.
func TestDebInstallAndServe(t *testing.T) {
	env := testbed.Require(t)
	deb := makeDeb(t)
	root := freshRoot(t)
	r := &chroot{t: t, dir: root}

	if err := copyFile(deb, filepath.Join(root, "tmp", filepath.Base(deb)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := r.must("dpkg", "-i", "/tmp/"+filepath.Base(deb))
	t.Logf("dpkg -i:\n%s", out)
	if !strings.Contains(out, "gpubridge: edit /etc/gpubridge/gpubridge.yaml") {
		t.Errorf("postinst did not say what to do next:\n%s", out)
	}

	// The system user and group.
	pw := strings.Split(strings.TrimSpace(r.must("getent", "passwd", "gpubridge")), ":")
	if len(pw) != 7 {
		t.Fatalf("getent passwd gpubridge: %q", pw)
	}
	uid, _ := strconv.Atoi(pw[2])
	if uid == 0 || uid >= 1000 || pw[5] != "/var/lib/gpubridge" || pw[6] != "/usr/sbin/nologin" {
		t.Errorf("gpubridge user %q: want a system uid (1-999), home /var/lib/gpubridge, shell /usr/sbin/nologin", pw)
	}
	gid, _ := strconv.Atoi(pw[3])
	if gr := strings.TrimSpace(r.must("getent", "group", "gpubridge")); !strings.HasPrefix(gr, "gpubridge:x:"+pw[3]+":") {
		t.Errorf("group gpubridge %q, the user's gid %s", gr, pw[3])
	}
	// Files, modes, owners.
	for _, c := range []struct {
		path     string
		mode     os.FileMode
		uid, gid int
	}{
		{"usr/bin/gpubridge", 0o755, 0, 0},
		{"usr/lib/systemd/system/gpubridge.service", 0o644, 0, 0},
		{"etc/gpubridge", 0o755 | os.ModeDir, 0, 0},
		{"etc/gpubridge/gpubridge.yaml", 0o640, 0, gid},
		{"var/lib/gpubridge", 0o755 | os.ModeDir, uid, gid},
		{"var/lib/gpubridge/guard", 0o755 | os.ModeDir, uid, gid},
		{"usr/share/man/man1/gpubridge.1.gz", 0o644, 0, 0},
		{"usr/share/man/man1/gpubridge-serve.1.gz", 0o644, 0, 0},
		{"usr/share/bash-completion/completions/gpubridge", 0o644, 0, 0},
		{"usr/share/zsh/vendor-completions/_gpubridge", 0o644, 0, 0},
		{"usr/share/fish/vendor_completions.d/gpubridge.fish", 0o644, 0, 0},
		{"usr/share/gpubridge/slurm/job_submit.lua", 0o644, 0, 0},
		{"usr/share/gpubridge/slurm/job_submit_burst.lua", 0o644, 0, 0},
		{"usr/share/gpubridge/sql/setup.sql", 0o644, 0, 0},
		{"usr/share/doc/gpubridge/docs/install.md", 0o644, 0, 0},
		{"usr/share/doc/gpubridge/CHANGELOG.md", 0o644, 0, 0},
		{"usr/share/gpubridge/grafana/gpubridge.json", 0o644, 0, 0},
		{"usr/share/gpubridge/prometheus/alerts.yml", 0o644, 0, 0},
		{"usr/share/gpubridge/openapi.yaml", 0o644, 0, 0},
		{"usr/share/gpubridge/schema/defs.json", 0o644, 0, 0},
		{"usr/share/gpubridge/gpubridge.yaml.example", 0o644, 0, 0},
	} {
		st, err := os.Stat(filepath.Join(root, c.path))
		if err != nil {
			t.Errorf("/%s: %v", c.path, err)
			continue
		}
		sys := st.Sys().(*syscall.Stat_t)
		if st.Mode() != c.mode || int(sys.Uid) != c.uid || int(sys.Gid) != c.gid {
			t.Errorf("/%s: mode %v uid %d gid %d, want %v %d %d", c.path, st.Mode(), sys.Uid, sys.Gid, c.mode, c.uid, c.gid)
		}
	}
	for _, c := range [][2]string{
		{"contrib/gpubridge.yaml.example", "etc/gpubridge/gpubridge.yaml"},
		{"contrib/job_submit.lua", "usr/share/gpubridge/slurm/job_submit.lua"},
		{"contrib/sql/setup.sql", "usr/share/gpubridge/sql/setup.sql"},
		{"contrib/grafana/gpubridge.json", "usr/share/gpubridge/grafana/gpubridge.json"},
		{"contrib/prometheus/alerts.yml", "usr/share/gpubridge/prometheus/alerts.yml"},
		{"cmd/gpubridge/api/openapi.yaml", "usr/share/gpubridge/openapi.yaml"},
		{"CHANGELOG.md", "usr/share/doc/gpubridge/CHANGELOG.md"},
	} {
		if a, b := read(t, filepath.Join(repo, c[0])), read(t, filepath.Join(root, c[1])); a != b {
			t.Errorf("/%s differs from %s", c[1], c[0])
		}
	}
	unit := read(t, filepath.Join(root, "usr/lib/systemd/system/gpubridge.service"))
	if !strings.Contains(unit, "\nExecStart=/usr/bin/gpubridge serve --config /etc/gpubridge/gpubridge.yaml\n") || !strings.Contains(unit, "\nUser=gpubridge\n") {
		t.Errorf("packaged unit:\n%s", unit)
	}
	if v := strings.TrimSpace(r.must("gpubridge", "version")); !strings.HasPrefix(v, "gpubridge ") {
		t.Errorf("gpubridge version: %q", v)
	}
	if out, err := exec.Command("zcat", filepath.Join(root, "usr/share/man/man1/gpubridge-init-db.1.gz")).Output(); err != nil || !strings.Contains(string(out), ".TH \"GPUBRIDGE\" \"1\"") {
		t.Errorf("man page gpubridge-init-db.1.gz: %v\n%.300s", err, out)
	}

	// systemd-analyze verify: the unit as installed, in the root (it checks
	// the ExecStart binary, User=, the directives and their values).
	if out, err := r.run(nil, "systemd-analyze", "verify", "--man=no", "/usr/lib/systemd/system/gpubridge.service"); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// ...and it does find a broken unit (the check is not a no-op).
	bad := strings.Replace(unit, "ExecStart=/usr/bin/gpubridge", "ExecStart=/usr/bin/gpubridge-missing", 1)
	if err := os.WriteFile(filepath.Join(root, "tmp/gpubridge-bad.service"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := r.run(nil, "systemd-analyze", "verify", "--man=no", "/tmp/gpubridge-bad.service"); err == nil {
		t.Errorf("systemd-analyze verify accepted a unit whose ExecStart is missing:\n%s", out)
	}

	// Point the packaged configuration at the testbed, as docs/install.md
	// says: cluster, DSNs, the JWT key readable by group gpubridge.
	dbName, dsn := scratchDB(t, env)
	conf := read(t, filepath.Join(root, "etc/gpubridge/gpubridge.yaml"))
	port, mport := freePort(t), freePort(t)
	for _, e := range [][2]string{
		{"cluster: mycluster", "cluster: " + env.Cluster},
		{"url: http://127.0.0.1:6820", "url: " + env.RestURL},
		{`"gpubridge:CHANGE-ME@tcp(127.0.0.1:3306)/gpubridge?parseTime=true&loc=UTC"`, strconv.Quote(dsn)},
		{`"gpubridge_ro:CHANGE-ME@tcp(127.0.0.1:3306)/slurm_acct_db?parseTime=true&loc=UTC"`, strconv.Quote(env.SlurmDBDSN)},
		{"listen: 127.0.0.1:9180", fmt.Sprintf("listen: 127.0.0.1:%d", port)},
		{"metricsListen: 127.0.0.1:9181", fmt.Sprintf("metricsListen: 127.0.0.1:%d", mport)},
		// The testbed is shared: reconcile of this empty store must not
		// touch the other tests' tenants.
		{`reconcile: "@every 5m"`, `reconcile: ""`},
	} {
		if !strings.Contains(conf, e[0]) {
			t.Fatalf("the packaged configuration has no %q:\n%s", e[0], conf)
		}
		conf = strings.Replace(conf, e[0], e[1], 1)
	}
	writeKeep(t, filepath.Join(root, "etc/gpubridge/gpubridge.yaml"), conf)
	key, err := os.ReadFile(env.JWTKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	kp := filepath.Join(root, "etc/slurm/jwt_hs256.key")
	if err := os.MkdirAll(filepath.Dir(kp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kp, key, 0o600); err != nil {
		t.Fatal(err)
	}
	r.must("chown", "root:gpubridge", "/etc/slurm/jwt_hs256.key")
	r.must("chmod", "0640", "/etc/slurm/jwt_hs256.key")
	out = r.must("runuser", "-u", "gpubridge", "--", "gpubridge", "ping")
	t.Logf("gpubridge ping as gpubridge:\n%s", out)

	// The schema, made once and explicitly (serve never makes it in an
	// empty database on its own).
	out = r.must("runuser", "-u", "gpubridge", "--", "gpubridge", "migrate")
	t.Logf("gpubridge migrate as gpubridge: %s", out)
	if !strings.Contains(out, "was empty; created gpubridge's schema") {
		t.Errorf("gpubridge migrate: %q", out)
	}

	// Start the daemon as the unit does, with a notify socket.
	notify := filepath.Join(root, "run/gpubridge-test.notify")
	sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notify, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	if err := os.Chmod(notify, 0o777); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	serve := exec.Command("chroot", root, "/usr/bin/env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "NOTIFY_SOCKET=/run/gpubridge-test.notify",
		"setpriv", "--reuid=gpubridge", "--regid=gpubridge", "--init-groups", "--",
		"/usr/bin/gpubridge", "serve", "--config", "/etc/gpubridge/gpubridge.yaml")
	serve.Stdout, serve.Stderr = &logs, &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	defer func() {
		if serve.ProcessState == nil {
			_ = serve.Process.Kill()
			<-exited
		}
		t.Logf("gpubridge serve's log:\n%s", logs.String())
	}()
	ready := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, _, err := sock.ReadFromUnix(buf)
			if err != nil {
				return
			}
			if m := string(buf[:n]); strings.Contains(m, "READY=1") {
				ready <- m
				return
			}
		}
	}()
	select {
	case m := <-ready:
		t.Logf("sd_notify: %q", m)
	case err := <-exited:
		t.Fatalf("gpubridge serve exited before READY=1: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("no READY=1 from gpubridge serve within 60 s")
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if body := httpGet(t, base+"/healthz"); strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %q", body)
	}
	if body := httpGet(t, base+"/readyz"); strings.TrimSpace(body) != "ready" {
		t.Errorf("/readyz: %q (slurmrestd or a database not ready for the packaged configuration)", body)
	}
	deadline := time.Now().Add(30 * time.Second)
	mbase := fmt.Sprintf("http://127.0.0.1:%d", mport)
	for !strings.Contains(httpGet(t, mbase+"/metrics"), "\ngpubridge_leader 1\n") {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not take the leader lock within 30 s; /metrics:\n%s", httpGet(t, mbase+"/metrics"))
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The store was migrated by the daemon's user (gpubridge migrate).
	db := sqlx.MustOpen("mysql", dsn)
	defer db.Close()
	var tables int
	if err := db.Get(&tables, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ?", dbName); err != nil || tables == 0 {
		t.Errorf("tables in %s after serve started: %d, %v", dbName, tables, err)
	}
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("gpubridge serve after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("gpubridge serve did not stop within 30 s of SIGTERM")
	}
	if strings.Contains(logs.String(), string(key)) || strings.Contains(logs.String(), "gpubridge_ro:gpubridge_ro@") {
		t.Error("the daemon's log holds a secret")
	}

	// Remove keeps the configuration; purge removes it and the state
	// directory, and keeps the system user.
	r.must("dpkg", "-r", "gpubridge")
	if _, err := os.Stat(filepath.Join(root, "usr/bin/gpubridge")); err == nil {
		t.Error("dpkg -r left /usr/bin/gpubridge")
	}
	if _, err := os.Stat(filepath.Join(root, "etc/gpubridge/gpubridge.yaml")); err != nil {
		t.Errorf("dpkg -r removed the configuration: %v", err)
	}
	r.must("dpkg", "-P", "gpubridge")
	for _, p := range []string{"etc/gpubridge/gpubridge.yaml", "var/lib/gpubridge"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			t.Errorf("dpkg -P left /%s", p)
		}
	}
	if out, err := r.run(nil, "getent", "passwd", "gpubridge"); err != nil {
		t.Errorf("purge removed the gpubridge user: %v %s", err, out)
	}
	if out, _ := r.run(nil, "dpkg-statoverride", "--list"); strings.Contains(out, "gpubridge") {
		t.Errorf("purge left a statoverride: %s", out)
	}
}

// makeDeb builds the packages (makePackages: `make packages`) and returns
// the .deb's path.
func makeDeb(t *testing.T) string {
	t.Helper()
	deb, _ := makePackages(t)
	info, _ := exec.Command("dpkg-deb", "-f", deb, "Package", "Version", "Architecture", "Maintainer", "Depends").Output()
	t.Logf("%s:\n%s", filepath.Base(deb), info)
	if m := string(info); strings.Contains(m, "localhost") || !strings.Contains(m, "Maintainer: ") {
		t.Errorf("the .deb's maintainer:\n%s", m)
	}
	return deb
}

// freshRoot unpacks the newest cached testbed root into a directory of its
// own under /var/tmp, removed at the end. Nothing is mounted in it.
func freshRoot(t *testing.T) string {
	t.Helper()
	tars, _ := filepath.Glob("/var/cache/gpubridge/testbed-*.tar.zst")
	if len(tars) == 0 {
		t.Fatal("no cached testbed root in /var/cache/gpubridge (make testbed-up builds it)")
	}
	sort.Slice(tars, func(i, j int) bool { return mtime(tars[i]).After(mtime(tars[j])) })
	dir, err := os.MkdirTemp("/var/tmp", "gpubridge-site-deb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("findmnt", "-rn", "-o", "TARGET").Output(); err == nil && strings.Contains(string(out), dir) {
			t.Errorf("something is mounted under %s; not removing it", dir)
			return
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	start := time.Now()
	if out, err := exec.Command("tar", "-C", dir, "--numeric-owner", "-I", "zstd", "-xf", tars[0]).CombinedOutput(); err != nil {
		t.Fatalf("unpack %s: %v\n%s", tars[0], err, out)
	}
	t.Logf("fresh root from %s in %s: %s", filepath.Base(tars[0]), time.Since(start).Round(time.Millisecond), dir)
	return dir
}

type chroot struct {
	t   *testing.T
	dir string
}

func (c *chroot) run(stdin []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{c.dir, "/usr/bin/env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "HOME=/root", "DEBIAN_FRONTEND=noninteractive"}, args...)
	cmd := exec.CommandContext(ctx, "chroot", argv...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (c *chroot) must(args ...string) string {
	c.t.Helper()
	out, err := c.run(nil, args...)
	if err != nil {
		c.t.Fatalf("in the root: %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// scratchDB makes an empty database of this test's own for the daemon's
// store (the testbed's gpubridge user may create gpubridge_* databases)
// and drops it at the end.
func scratchDB(t *testing.T, env testbed.Env) (name, dsn string) {
	t.Helper()
	cfg, err := mysql.ParseDSN(env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name = "gpubridge_site_" + hex.EncodeToString(b)
	admin := *cfg
	admin.DBName = ""
	db, err := sqlx.Open("mysql", admin.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := db.Exec("DROP DATABASE IF EXISTS `" + name + "`"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
		db.Close()
	})
	if _, err := db.Exec("CREATE DATABASE `" + name + "`"); err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	return name, cfg.FormatDSN()
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return string(b)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeKeep replaces a file's content, keeping its mode and owner.
func writeKeep(t *testing.T, p, content string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if _, err := w.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, mode)
}

func mtime(p string) time.Time {
	st, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}
