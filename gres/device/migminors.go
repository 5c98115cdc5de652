package device

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// migMinors maps capability paths ("gpu0/gi1/access",
// "gpu0/gi1/ci0/access") to the minor of /dev/nvidia-caps/nvidia-cap<N>.
type migMinors map[string]int

func readMIGMinors(path string) (migMinors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read MIG capability minors: %w", err)
	}
	defer f.Close()
	m, err := parseMIGMinors(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// parseMIGMinors reads lines of "<capability> <minor>".
func parseMIGMinors(r io.Reader) (migMinors, error) {
	m := migMinors{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: expected \"<capability> <minor>\", got %q", line, sc.Text())
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("line %d: minor %q is not a number", line, f[1])
		}
		m[f[0]] = n
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

// files returns the capability device files of a MIG device: its GPU
// instance's and its compute instance's. The driver keys them by the
// parent GPU's minor number.
func (m migMinors) files(gpuMinor, gi, ci int) ([]string, error) {
	giKey := fmt.Sprintf("gpu%d/gi%d/access", gpuMinor, gi)
	ciKey := fmt.Sprintf("gpu%d/gi%d/ci%d/access", gpuMinor, gi, ci)
	var out []string
	for _, k := range []string{giKey, ciKey} {
		n, ok := m[k]
		if !ok {
			return nil, fmt.Errorf("the MIG capability minors have no entry %q", k)
		}
		out = append(out, fmt.Sprintf("/dev/nvidia-caps/nvidia-cap%d", n))
	}
	return out, nil
}
