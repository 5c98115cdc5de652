//go:build integration

package install

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The packages, built once per test binary by `make packages` (the .deb
// and the .rpm from packaging/nfpm.yaml).
var (
	packagesOnce     sync.Once
	packagesDeb      string
	packagesRPM      string
	packagesBuildErr error
	packagesLog      string
)

// makePackages runs `make packages` once and returns the paths of the
// .deb and the .rpm.
func makePackages(t *testing.T) (deb, rpm string) {
	t.Helper()
	packagesOnce.Do(func() {
		cmd := exec.Command("make", "--no-print-directory", "packages")
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		packagesLog = string(out)
		if err != nil {
			packagesBuildErr = fmt.Errorf("make packages: %v", err)
			return
		}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			p, _ := filepath.Abs(filepath.Join(repo, strings.TrimSpace(l)))
			switch {
			case strings.HasPrefix(l, "bin/") && strings.HasSuffix(l, ".deb"):
				packagesDeb = p
			case strings.HasPrefix(l, "bin/") && strings.HasSuffix(l, ".rpm"):
				packagesRPM = p
			}
		}
		if packagesDeb == "" || packagesRPM == "" {
			packagesBuildErr = fmt.Errorf("make packages printed no .deb or .rpm path")
		}
	})
	if packagesBuildErr != nil {
		t.Fatalf("%v\n%s", packagesBuildErr, packagesLog)
	}
	return packagesDeb, packagesRPM
}

func rpmQuery(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("rpm", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("rpm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// debFiles lists the regular files and links of a .deb (dpkg-deb -c) as
// absolute paths.
func debFiles(t *testing.T, deb string) []string {
	t.Helper()
	out, err := exec.Command("dpkg-deb", "--fsys-tarfile", deb).Output()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("tar", "-t")
	cmd.Stdin = strings.NewReader(string(out))
	list, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		if strings.HasSuffix(l, "/") {
			continue
		}
		files = append(files, strings.TrimPrefix(l, "."))
	}
	slices.Sort(files)
	return files
}

// rpmFiles lists the regular files of an .rpm (directories left out).
func rpmFiles(t *testing.T, rpm string) []string {
	t.Helper()
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(rpmQuery(t, "-qp", "--qf", `[%{FILEMODES:perms} %{FILENAMES}\n]`, rpm)), "\n") {
		perms, name, _ := strings.Cut(l, " ")
		if !strings.HasPrefix(perms, "d") {
			files = append(files, name)
		}
	}
	slices.Sort(files)
	return files
}

// packagedPaths: what the docs name and the packages must hold, in both
// families (docs/install.md's table and every page that points to a file
// under /usr/share/gpubridge).
var packagedPaths = []string{
	"/usr/bin/gpubridge",
	"/usr/lib/systemd/system/gpubridge.service",
	"/etc/gpubridge/gpubridge.yaml",
	"/usr/share/gpubridge/gpubridge.yaml.example",
	"/usr/share/gpubridge/slurm/job_submit.lua",
	"/usr/share/gpubridge/slurm/job_submit_burst.lua",
	"/usr/share/gpubridge/slurm/job_submit_site.lua.example",
	"/usr/share/gpubridge/sql/setup.sql",
	"/usr/share/gpubridge/grafana/gpubridge.json",
	"/usr/share/gpubridge/prometheus/alerts.yml",
	"/usr/share/gpubridge/prometheus/alerts_test.yml",
	"/usr/share/gpubridge/openapi.yaml",
	"/usr/share/gpubridge/schema/defs.json",
	"/usr/share/gpubridge/schema/show-tenants.json",
	"/usr/share/man/man1/gpubridge.1.gz",
	"/usr/share/man/man1/gpubridge-serve.1.gz",
	"/usr/share/bash-completion/completions/gpubridge",
	"/usr/share/fish/vendor_completions.d/gpubridge.fish",
	"/usr/share/doc/gpubridge/README.md",
	"/usr/share/doc/gpubridge/CHANGELOG.md",
	"/usr/share/doc/gpubridge/docs/install.md",
}

// TestPackagesHoldWhatTheDocsName builds both packages and checks that
// each holds every path the docs name (the list above, every
// /usr/share/gpubridge and /usr/share/doc/gpubridge path written in README
// and docs/*.md, every JSON schema of docs/schema) and that the two file
// lists are the same but for the documented differences of the families
// (zsh's completion directory, Debian's copyright file).
func TestPackagesHoldWhatTheDocsName(t *testing.T) {
	deb, rpm := makePackages(t)
	debList, rpmList := debFiles(t, deb), rpmFiles(t, rpm)

	want := slices.Clone(packagedPaths)
	schemas, _ := filepath.Glob(filepath.Join(repo, "docs/schema/*.json"))
	if len(schemas) == 0 {
		t.Fatal("no docs/schema/*.json")
	}
	for _, s := range schemas {
		want = append(want, "/usr/share/gpubridge/schema/"+filepath.Base(s))
	}
	docs, _ := filepath.Glob(filepath.Join(repo, "docs/*.md"))
	docs = append(docs, filepath.Join(repo, "README.md"))
	named := regexp.MustCompile("/usr/share/(?:doc/)?gpubridge/[A-Za-z0-9_./-]*[A-Za-z0-9_]")
	for _, d := range docs {
		want = append(want, named.FindAllString(read(t, d), -1)...)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	for _, list := range []struct {
		name  string
		files []string
	}{{filepath.Base(deb), debList}, {filepath.Base(rpm), rpmList}} {
		for _, p := range want {
			// A directory named in the docs: something under it.
			if !slices.Contains(list.files, p) && !slices.ContainsFunc(list.files, func(f string) bool { return strings.HasPrefix(f, p+"/") }) {
				t.Errorf("%s has no %s", list.name, p)
			}
		}
	}

	onlyDeb := []string{"/usr/share/doc/gpubridge/copyright", "/usr/share/zsh/vendor-completions/_gpubridge"}
	onlyRPM := []string{"/usr/share/zsh/site-functions/_gpubridge"}
	for _, p := range debList {
		if !slices.Contains(rpmList, p) && !slices.Contains(onlyDeb, p) {
			t.Errorf("the .deb has %s, the .rpm has not", p)
		}
	}
	for _, p := range rpmList {
		if !slices.Contains(debList, p) && !slices.Contains(onlyRPM, p) {
			t.Errorf("the .rpm has %s, the .deb has not", p)
		}
	}
	t.Logf("%s: %d files; %s: %d files", filepath.Base(deb), len(debList), filepath.Base(rpm), len(rpmList))

	// A release without its CHANGELOG.md section is not packaged.
	cmd := exec.Command("packaging/build.sh", "deb", "bin/package/gpubridge", "bin/man", t.TempDir(), "v9.9.9")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), `CHANGELOG.md has no section "## [9.9.9]"`) {
		t.Errorf("build.sh packaged v9.9.9, which CHANGELOG.md does not name: %v\n%s", err, out)
	}
}

// TestRPMPackage checks the .rpm's header, file list, modes and owners,
// config flags and scriptlets (rpm -qp), then installs it with rpm --root
// into a fresh copy of the testbed's cached Debian root (there is no RHEL
// root to be had here; its groupadd, useradd and /bin/sh are what the
// scriptlets need), upgrades it over an edited configuration and erases it.
func TestRPMPackage(t *testing.T) {
	if _, err := exec.LookPath("rpm"); err != nil {
		t.Fatal("rpm is not installed (make deps installs it)")
	}
	_, rpm := makePackages(t)

	hdr := rpmQuery(t, "-qp", "--qf", "%{NAME}|%{VERSION}|%{RELEASE}|%{ARCH}|%{PACKAGER}|%{URL}\n", rpm)
	f := strings.Split(strings.TrimSpace(hdr), "|")
	if len(f) != 6 || f[0] != "gpubridge" || f[2] != "1" || f[3] != "x86_64" {
		t.Errorf("rpm header: %q", hdr)
	}
	ver := strings.TrimSpace(runOut(t, "packaging/version.sh"))
	if f[1] != ver {
		t.Errorf("rpm version %q, packaging/version.sh says %q", f[1], ver)
	}
	if strings.Contains(f[4], "localhost") || !regexp.MustCompile(`^[^<>]+ <[^@<>\s]+@[^@<>\s]+\.[a-z]+>$`).MatchString(f[4]) {
		t.Errorf("rpm packager %q: want Name <address>, not localhost", f[4])
	}

	// Modes, owners and flags of what matters (rpm -qp --qf, one line a file).
	attrs := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(rpmQuery(t, "-qp", "--qf", `[%{FILENAMES} %{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILEFLAGS:fflags}\n]`, rpm)), "\n") {
		name, rest, _ := strings.Cut(l, " ")
		attrs[name] = strings.TrimSpace(rest)
	}
	for p, want := range map[string]string{
		"/usr/bin/gpubridge":                        "-rwxr-xr-x root:root",
		"/etc/gpubridge":                            "drwxr-xr-x root:root",
		"/etc/gpubridge/gpubridge.yaml":             "-rw-r----- root:gpubridge cn",
		"/var/lib/gpubridge":                        "drwxr-xr-x gpubridge:gpubridge",
		"/var/lib/gpubridge/guard":                  "drwxr-xr-x gpubridge:gpubridge",
		"/usr/lib/systemd/system/gpubridge.service": "-rw-r--r-- root:root",
		"/usr/share/gpubridge/slurm/job_submit.lua": "-rw-r--r-- root:root",
		"/usr/share/doc/gpubridge/CHANGELOG.md":     "-rw-r--r-- root:root",
	} {
		if got := attrs[p]; got != want {
			t.Errorf("%s: %q, want %q", p, got, want)
		}
	}
	if got := strings.TrimSpace(rpmQuery(t, "-qp", "--configfiles", rpm)); got != "/etc/gpubridge/gpubridge.yaml" {
		t.Errorf("config files: %q", got)
	}
	reqs := rpmQuery(t, "-qp", "--requires", rpm)
	if !regexp.MustCompile(`(?m)^glibc >= 2\.[0-9.]+$`).MatchString(reqs) || !strings.Contains(reqs, "shadow-utils") {
		t.Errorf("requires:\n%s", reqs)
	}

	// The scriptlets: which ones, what each does, and on which $1.
	scripts := rpmQuery(t, "-qp", "--scripts", rpm)
	sections := map[string]string{}
	var cur string
	for _, l := range strings.Split(scripts, "\n") {
		if m := regexp.MustCompile(`^(\w+) scriptlet \(using /bin/sh\):$`).FindStringSubmatch(l); m != nil {
			cur = m[1]
			continue
		}
		sections[cur] += l + "\n"
	}
	for name, wants := range map[string][]string{
		"preinstall":    {"groupadd --system gpubridge", "useradd --system --gid gpubridge --home-dir /var/lib/gpubridge", "--shell /usr/sbin/nologin"},
		"postinstall":   {"systemctl daemon-reload", `if [ "$1" -le 1 ]`, "gpubridge: edit /etc/gpubridge/gpubridge.yaml"},
		"preuninstall":  {`if [ "$1" -eq 0 ]`, "systemctl stop gpubridge.service", "systemctl disable gpubridge.service"},
		"postuninstall": {"systemctl daemon-reload"},
	} {
		for _, w := range wants {
			if !strings.Contains(sections[name], w) {
				t.Errorf("%s scriptlet lacks %q:\n%s", name, w, sections[name])
			}
		}
	}
	delete(sections, "")
	if len(sections) != 4 {
		t.Errorf("scriptlets: %d, want 4:\n%s", len(sections), scripts)
	}

	// Install, upgrade, erase in a clean root.
	root := freshRoot(t)
	r := &chroot{t: t, dir: root}
	rpmRoot := func(args ...string) (string, error) {
		out, err := exec.Command("rpm", append([]string{"--root", root}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := rpmRoot("--initdb"); err != nil {
		t.Fatalf("rpm --initdb: %v\n%s", err, out)
	}
	// --nodeps: the Debian root's glibc and passwd are not in its rpm database.
	out, err := rpmRoot("-i", "--nodeps", rpm)
	if err != nil {
		t.Fatalf("rpm -i: %v\n%s", err, out)
	}
	if !strings.Contains(out, "gpubridge: edit /etc/gpubridge/gpubridge.yaml") {
		t.Errorf("%%post did not say what to do next:\n%s", out)
	}
	pw := strings.Split(strings.TrimSpace(r.must("getent", "passwd", "gpubridge")), ":")
	if len(pw) != 7 || pw[5] != "/var/lib/gpubridge" || pw[6] != "/usr/sbin/nologin" {
		t.Fatalf("gpubridge user after rpm -i: %q", pw)
	}
	ls := r.must("stat", "-c", "%n %a %U:%G", "/etc/gpubridge/gpubridge.yaml", "/var/lib/gpubridge/guard", "/usr/bin/gpubridge")
	for _, w := range []string{"/etc/gpubridge/gpubridge.yaml 640 root:gpubridge", "/var/lib/gpubridge/guard 755 gpubridge:gpubridge", "/usr/bin/gpubridge 755 root:root"} {
		if !strings.Contains(ls, w) {
			t.Errorf("after rpm -i, want %q in:\n%s", w, ls)
		}
	}
	if v := r.must("runuser", "-u", "gpubridge", "--", "gpubridge", "version"); !strings.HasPrefix(v, "gpubridge ") {
		t.Errorf("gpubridge version as gpubridge: %q", v)
	}
	// The configuration is the daemon group's to read, nobody else's.
	if out, err := r.run(nil, "runuser", "-u", "nobody", "--", "cat", "/etc/gpubridge/gpubridge.yaml"); err == nil {
		t.Errorf("nobody read the configuration:\n%.200s", out)
	}

	// An upgrade keeps the edited configuration (%config(noreplace)).
	conf := filepath.Join(root, "etc/gpubridge/gpubridge.yaml")
	edited := read(t, conf) + "# edited by the site\n"
	writeKeep(t, conf, edited)
	if out, err := rpmRoot("-U", "--replacepkgs", "--nodeps", rpm); err != nil || !strings.Contains(out, "gpubridge: upgraded") {
		t.Errorf("rpm -U: %v\n%s", err, out)
	}
	if read(t, conf) != edited {
		t.Error("rpm -U replaced the edited configuration")
	}
	// Erase: the edited configuration is kept as .rpmsave, the files go,
	// the user stays.
	if out, err := rpmRoot("-e", "gpubridge"); err != nil {
		t.Errorf("rpm -e: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "usr/bin/gpubridge")); err == nil {
		t.Error("rpm -e left /usr/bin/gpubridge")
	}
	if got, err := os.ReadFile(conf + ".rpmsave"); err != nil || string(got) != edited {
		t.Errorf("rpm -e did not keep the edited configuration as .rpmsave: %v", err)
	}
	if out, err := r.run(nil, "getent", "passwd", "gpubridge"); err != nil {
		t.Errorf("rpm -e removed the gpubridge user: %v %s", err, out)
	}
}

// TestPackagedBinaryGlibc: the binary in both packages needs no glibc
// symbol version newer than the floor docs/install.md names, and runs on
// a glibc older than that floor (Ubuntu 18.04's 2.27). The check is not a
// no-op: the host build (make build, linked against Debian 12's glibc
// 2.36) needs GLIBC_2.34, is reported, does not run on 2.27, and build.sh
// refuses to package it.
func TestPackagedBinaryGlibc(t *testing.T) {
	deb, rpm := makePackages(t)
	m := regexp.MustCompile(`\*\*glibc (2\.[0-9]+) or newer\*\*`).FindStringSubmatch(read(t, filepath.Join(repo, "docs/install.md")))
	if m == nil {
		t.Fatal(`docs/install.md names no floor ("**glibc 2.N or newer**")`)
	}
	floor := m[1]
	dir := t.TempDir()
	debBin, rpmBin := filepath.Join(dir, "deb-gpubridge"), filepath.Join(dir, "rpm-gpubridge")
	runOut(t, "bash", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -xO ./usr/bin/gpubridge >"$2" && chmod +x "$2"`, "-", deb, debBin)
	runOut(t, "bash", "-c", `rpm2cpio "$1" | cpio --quiet -i --to-stdout /usr/bin/gpubridge >"$2" && chmod +x "$2"`, "-", rpm, rpmBin)
	for _, b := range []string{debBin, rpmBin} {
		need := newestGlibc(t, b)
		t.Logf("%s needs GLIBC_%s; the documented floor is %s", filepath.Base(b), need, floor)
		if versionLess(floor, need) {
			t.Errorf("%s needs GLIBC_%s, newer than docs/install.md's floor %s", filepath.Base(b), need, floor)
		}
	}
	// It runs on glibc 2.27, older than the floor (Ubuntu 18.04's loader
	// and libraries, packaging/oldglibc.sh), and gres inventory reaches
	// NVML's loader (dlopen) there too.
	old := oldGlibc(t)
	if out := old(rpmBin, "version"); !strings.HasPrefix(out, "gpubridge ") {
		t.Errorf("on glibc 2.27: %q", out)
	}
	if out := old(debBin, "gres", "inventory"); !strings.Contains(out, "libnvidia-ml.so.1 was not found") && !strings.Contains(out, "GPU") {
		t.Errorf("gres inventory on glibc 2.27: %s", out)
	}

	// The planted defect: a binary linked against the host's glibc.
	host := strings.TrimSpace(runOut(t, "getconf", "GNU_LIBC_VERSION"))
	if hv := strings.TrimPrefix(host, "glibc "); versionLess(hv, "2.34") {
		t.Logf("the host's glibc %s is older than 2.34: its build is no planted defect; not checked", hv)
		return
	}
	hostBin := "bin/gpubridge" // runOut runs in the repository
	if need := newestGlibc(t, hostBin); !versionLess(floor, need) {
		t.Errorf("the host build bin/gpubridge needs GLIBC_%s; the check would not catch a binary linked against glibc >= 2.34", need)
	}
	if out := old(filepath.Join(repo, hostBin), "version"); !strings.Contains(out, "GLIBC_2.34' not found") {
		t.Errorf("the host build ran on glibc 2.27: %q; the run there would not catch a binary linked against glibc >= 2.34", out)
	}
	cmd := exec.Command("packaging/build.sh", "rpm", "bin/gpubridge", "bin/man", dir, "v0.0.1")
	cmd.Dir = repo
	if o, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(o), "newer than the floor") {
		t.Errorf("build.sh packaged the host build: %v\n%s", err, o)
	}
}

// oldGlibc returns a function that runs the binary bin with args on
// Ubuntu 18.04's glibc 2.27 (packaging/oldglibc.sh) and returns its
// combined output.
func oldGlibc(t *testing.T) func(bin string, args ...string) string {
	t.Helper()
	// Its path is its standard output alone: on a machine without the root
	// yet it says on stderr that it fetches one (the first make test of a
	// fresh CI machine read that line as part of the path).
	cmd := exec.Command("packaging/oldglibc.sh")
	cmd.Dir = repo
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("packaging/oldglibc.sh: %v\n%s", err, stderr.String())
	}
	t.Logf("packaging/oldglibc.sh: %s%s", stderr.String(), out)
	root := strings.TrimSpace(string(out))
	lib := filepath.Join(root, "lib/x86_64-linux-gnu")
	return func(bin string, args ...string) string {
		o, _ := exec.Command(filepath.Join(lib, "ld-2.27.so"), append([]string{"--library-path", lib, bin}, args...)...).CombinedOutput()
		return string(o)
	}
}

func newestGlibc(t *testing.T, bin string) string {
	t.Helper()
	out := runOut(t, "objdump", "-T", bin)
	newest := ""
	for _, v := range regexp.MustCompile(`GLIBC_([0-9]+(?:\.[0-9]+)+)`).FindAllStringSubmatch(out, -1) {
		if newest == "" || versionLess(newest, v[1]) {
			newest = v[1]
		}
	}
	if newest == "" {
		t.Fatalf("objdump -T %s: no GLIBC_ symbol versions", bin)
	}
	return newest
}

// versionLess compares dotted numeric versions.
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func runOut(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = repo
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
