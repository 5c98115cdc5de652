package kv

import "strings"

// Suggest is the candidate closest to word, for "did you mean": one within
// an edit distance of 2 (1 for words of up to 4 letters) or one that word
// is a prefix of, compared without case. It is "" when none is close.
func Suggest(word string, candidates []string) string {
	lw := strings.ToLower(word)
	if lw == "" {
		return ""
	}
	limit := 2
	if len(lw) <= 4 {
		limit = 1
	}
	// Scores are twice the distance; a prefix scores just past the limit,
	// so that a close word wins over a longer one it begins.
	best, bestScore := "", 2*limit+2
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == lw {
			return c
		}
		score := 2 * distance(lw, lc)
		if score > 2*limit && len(lw) >= 3 && strings.HasPrefix(lc, lw) {
			score = 2*limit + 1
		}
		if score < bestScore {
			best, bestScore = c, score
		}
	}
	return best
}

// DidYouMean is " (did you mean X?)" for Suggest's answer, or "".
func DidYouMean(word string, candidates []string) string {
	if s := Suggest(word, candidates); s != "" {
		return " (did you mean " + s + "?)"
	}
	return ""
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
