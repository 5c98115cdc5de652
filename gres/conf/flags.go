package conf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseWeights reads `--gpu-weight TYPE=WEIGHT` values: each a
// non-negative finite number, at most MaxGPUWeight. Render checks that
// each type is one of the node's.
func ParseWeights(m map[string]string) (map[string]float64, error) {
	out := map[string]float64{}
	for k, v := range m {
		w, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(w) || math.IsInf(w, 0) || w < 0 || w > MaxGPUWeight {
			return nil, fmt.Errorf("--gpu-weight %s=%s: the weight must be a non-negative finite number, at most %v", k, v, MaxGPUWeight)
		}
		out[k] = w
	}
	return out, nil
}

// ParseCores reads `--cores GPU=LIST` values: the key is a GPU index in
// digits; Render checks the list.
func ParseCores(m map[string]string) (map[int]string, error) {
	out := map[int]string{}
	for k, v := range m {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || strings.TrimLeft(k, "0123456789") != "" {
			return nil, fmt.Errorf("--cores %s=%s: the key is a GPU index (0, 1, ...)", k, v)
		}
		out[i] = v
	}
	return out, nil
}
