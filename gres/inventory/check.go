package inventory

import (
	"fmt"
	"path"
	"strings"
)

// Bounds of an inventory. The text fields reach gres.conf (as comments and
// type names) and the terminal, so each is held to the characters its kind
// uses: nothing NVML reports is written out unchecked.
const (
	MaxGPUs       = 64   // GPUs in one node
	maxMIGDevices = 7    // MIG devices of one GPU
	maxNumber     = 4096 // GPU indices, minors and MIG device indices
)

// textKind is a kind of text field and the characters it may hold.
type textKind struct {
	what  string // for the message
	max   int
	extra string // allowed besides ASCII letters and digits
	free  bool   // any printable ASCII but '#'
}

var (
	hostName    = textKind{what: "a host name (letters, digits, - _ .)", max: 253, extra: "-_."}
	version     = textKind{what: "a version (letters, digits, - _ .)", max: 64, extra: "-_."}
	productName = textKind{what: "a product name (letters, digits, space, - _ . +)", max: 96, extra: " -_.+"}
	uuid        = textKind{what: "a UUID (letters, digits, -)", max: 96, extra: "-"}
	pciID       = textKind{what: "a PCI device id (letters, digits)", max: 18}
	profile     = textKind{what: "a MIG profile name (letters, digits, . +)", max: 32, extra: ".+"}
	message     = textKind{what: "a message (printable characters but #)", max: 512, free: true}
)

// check returns why v is not of the kind, or "".
func (k textKind) check(v string) string {
	if len(v) > k.max {
		return fmt.Sprintf("%d characters; %s has at most %d", len(v), k.what, k.max)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(k.extra, c) >= 0
		if k.free {
			ok = c >= 0x20 && c < 0x7f && c != '#'
		}
		if !ok {
			return fmt.Sprintf("%q has the character %q at %d, which is not allowed in %s", v, c, i, k.what)
		}
	}
	return ""
}

// CheckDevicePath returns why p cannot be a device file of a gres.conf
// File= line, or "": it must be an absolute, clean path ("/dev/nvidia0")
// of letters, digits and - _ . / only, so no list separator, space,
// bracket, comment or ".." reaches Slurm.
func CheckDevicePath(p string) string {
	switch {
	case p == "":
		return "empty device path"
	case len(p) > 256:
		return fmt.Sprintf("device path of %d characters; at most 256", len(p))
	case !strings.HasPrefix(p, "/"):
		return fmt.Sprintf("device path %q is not absolute", p)
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/') {
			return fmt.Sprintf("device path %q has the character %q, which gres.conf would read as a separator or worse (allowed: letters, digits, - _ . /)", p, c)
		}
	}
	if path.Clean(p) != p || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
		return fmt.Sprintf("device path %q is not clean (no //, /./, /.. or trailing /)", p)
	}
	return ""
}
