package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// siteRun runs gpubridge with only the database DSNs set.
func siteRun(t *testing.T, store, ro string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("GPUBRIDGE_DB_DSN", store)
	t.Setenv("GPUBRIDGE_SLURMDB_DSN", ro)
	return configRun(t, args...)
}

func TestInitDB(t *testing.T) {
	const local = "gpubridge:s3cret@tcp(127.0.0.1:3306)/gpubridge?parseTime=true&loc=UTC"
	const localRO = "gpubridge_ro:r0@tcp(localhost:3306)/slurm_acct_db?parseTime=true&loc=UTC"
	code, out, errw := siteRun(t, local, localRO, "init-db")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errw)
	}
	for _, want := range []string{
		"CREATE DATABASE IF NOT EXISTS `gpubridge` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;\n",
		"CREATE USER IF NOT EXISTS 'gpubridge'@'localhost' IDENTIFIED BY 's3cret';\n",
		"GRANT ALL PRIVILEGES ON `gpubridge`.* TO 'gpubridge'@'127.0.0.1';\n",
		"GRANT SELECT ON `slurm_acct_db`.* TO 'gpubridge_ro'@'localhost';\n",
		"-- Run as MariaDB's root: gpubridge init-db | sudo mariadb\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("init-db output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "GRANT ALL PRIVILEGES ON `slurm_acct_db`") || strings.Contains(out, "GRANT SELECT ON `gpubridge`") {
		t.Errorf("init-db grants the wrong rights:\n%s", out)
	}

	cases := map[string]struct {
		store, ro string
		args      []string
		code      int
		want      string
	}{
		"remote without --client-host": {store: "gpubridge:a@tcp(db.example.org:3306)/gpubridge", ro: localRO, code: 2,
			want: "--client-host: the database is on another host (db.example.org:3306)"},
		"remote with --client-host": {store: "gpubridge:a@tcp(db.example.org:3306)/gpubridge", ro: "gpubridge_ro:b@tcp(db.example.org:3306)/slurm_acct_db",
			args: []string{"--client-host", "10.1.2.3"}, want: "GRANT SELECT ON `slurm_acct_db`.* TO 'gpubridge_ro'@'10.1.2.3';"},
		"the example's password": {store: "gpubridge:CHANGE-ME@tcp(127.0.0.1:3306)/gpubridge", ro: localRO, code: 2,
			want: `database.dsn: the password is still the example's "CHANGE-ME"`},
		"one user for both": {store: local, ro: "gpubridge:s3cret@tcp(127.0.0.1:3306)/slurm_acct_db", code: 2,
			want: `slurmdb.dsn: user "gpubridge" is database.dsn's user too`},
		"no slurmdb": {store: local, ro: "", code: 2, want: "slurmdb.dsn: slurmdbd's database is not configured"},
		"unix socket": {store: "gpubridge:a@unix(/run/mysqld/mysqld.sock)/gpubridge", ro: "gpubridge_ro:b@unix(/run/mysqld/mysqld.sock)/slurm_acct_db",
			want: "'gpubridge'@'localhost'"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errw := siteRun(t, c.store, c.ro, append([]string{"init-db"}, c.args...)...)
			if code != c.code || !strings.Contains(out+errw, c.want) {
				t.Errorf("exit %d (want %d), output %q %q; want it to say %q", code, c.code, out, errw, c.want)
			}
			if c.code != 0 && out != "" {
				t.Errorf("a refusal printed SQL: %q", out)
			}
		})
	}
}

// TestManPages: one page per visible command, each with its NAME and
// SYNOPSIS, dated by SOURCE_DATE_EPOCH.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SOURCE_DATE_EPOCH", "1764547200") // 2025-12-01
	code, out, errw := configRun(t, "man", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errw)
	}
	for _, page := range []string{"gpubridge.1", "gpubridge-serve.1", "gpubridge-show-tenants.1", "gpubridge-init-db.1", "gpubridge-completion-bash.1", "gpubridge-modify-tenant.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		s := string(b)
		if !strings.Contains(s, `.SH NAME`) || !strings.Contains(s, `.SH SYNOPSIS`) || !strings.Contains(s, `"Dec 2025"`) {
			t.Errorf("%s is not a dated man page:\n%.400s", page, s)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "gpubridge-man.1")); err == nil {
		t.Error("the hidden man command has a page")
	}
	if !strings.Contains(out, "man pages to "+dir) {
		t.Errorf("output %q", out)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if code, _, errw := configRun(t, "man", t.TempDir()); code != 2 || !strings.Contains(errw, `SOURCE_DATE_EPOCH="yesterday"`) {
		t.Errorf("bad SOURCE_DATE_EPOCH: exit %d, %q", code, errw)
	}
}

// TestCompletionScripts: the completion command is there for each shell.
func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{"bash": "# bash completion V2 for gpubridge", "zsh": "#compdef gpubridge", "fish": "complete -c gpubridge"} {
		code, out, errw := configRun(t, "completion", shell)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d, %q..., %s", shell, code, out[:min(len(out), 80)], errw)
		}
	}
}

// TestCompleteTenants: tenant names complete bare (where the command takes
// NAME) and as tenant=NAME; nothing when the store cannot be read.
func TestCompleteTenants(t *testing.T) {
	names := func(context.Context, *App) ([]string, error) { return []string{"acme", "acme2", "globex"}, nil }
	broken := func(context.Context, *App) ([]string, error) { return nil, errors.New("no database") }
	cases := map[string]struct {
		positional bool
		list       tenantNamesFunc
		args       []string
		toComplete string
		want       []string
		directive  cobra.ShellCompDirective
	}{
		"bare, all":             {positional: true, list: names, want: []string{"acme", "acme2", "globex"}},
		"bare, prefix":          {positional: true, list: names, toComplete: "ac", want: []string{"acme", "acme2"}},
		"bare, given ones left": {positional: true, list: names, args: []string{"acme"}, want: []string{"acme2", "globex"}},
		"key":                   {positional: true, list: names, toComplete: "tenant=g", want: []string{"tenant=globex"}},
		"key, upper case":       {list: names, toComplete: "TENANT=a", want: []string{"TENANT=acme", "TENANT=acme2"}},
		"key only":              {list: names, toComplete: "a", want: nil},
		"other key":             {positional: true, list: names, toComplete: "period=", want: nil},
		"no store":              {positional: true, list: broken, want: nil, directive: cobra.ShellCompDirectiveError},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, d := completeTenantsFrom(&App{Env: &app.Env{}}, c.positional, c.list)(nil, c.args, c.toComplete)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if want := cobra.ShellCompDirectiveNoFileComp | c.directive; d != want {
				t.Errorf("directive %v, want %v", d, want)
			}
		})
	}
}

// TestCompleteTenantsThroughCobra: hooked on a command, the shell's
// __complete request returns the names (what the scripts call).
func TestCompleteTenantsThroughCobra(t *testing.T) {
	root := &cobra.Command{Use: "gpubridge"}
	show := &cobra.Command{Use: "tenants", RunE: func(*cobra.Command, []string) error { return nil },
		ValidArgsFunction: completeTenantsFrom(&App{Env: &app.Env{}}, true, func(context.Context, *App) ([]string, error) { return []string{"acme", "b5a"}, nil })}
	root.AddCommand(show)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{cobra.ShellCompRequestCmd, "tenants", "b"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !slices.Equal(lines, []string{"b5a", ":4"}) {
		t.Errorf("__complete tenants b = %q, want b5a and :4 (no file completion)", lines)
	}
}
