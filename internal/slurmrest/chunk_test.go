package slurmrest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowUsers is a slurmrestd whose POST users/ takes perUser per user (as
// slurmdbd does, one by one) and commits before it answers; lose makes
// the first request that many: answered late without committing;
// lateCommit: committed, then answered late.
type slowUsers struct {
	perUser    time.Duration
	mu         sync.Mutex
	users      map[string]string // name -> default account
	posts      []int             // users per POST
	lose       int               // the next lose POSTs time out, not committed
	lateCommit int               // the next lateCommit POSTs commit, then time out
}

func (s *slowUsers) handle(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/users/"):
		var body struct {
			Users []wUser `json:"users"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.posts = append(s.posts, len(body.Users))
		lose, late := s.lose > 0, s.lose == 0 && s.lateCommit > 0
		if lose {
			s.lose--
		} else if late {
			s.lateCommit--
		}
		s.mu.Unlock()
		if lose {
			<-r.Context().Done() // never answers, never commits
			return
		}
		time.Sleep(time.Duration(len(body.Users)) * s.perUser)
		s.mu.Lock()
		for _, u := range body.Users {
			s.users[u.Name] = u.Default.Account
		}
		s.mu.Unlock()
		if late {
			<-r.Context().Done() // committed; the answer never comes
			return
		}
		io.WriteString(w, `{"errors":[]}`)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/users/"):
		s.mu.Lock()
		var out []wUser
		for n, d := range s.users {
			u := wUser{Name: n}
			u.Default.Account = d
			out = append(out, u)
		}
		s.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"users": out})
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func userSpecs(n int) []UserSpec {
	out := make([]UserSpec, n)
	for i := range out {
		out[i] = UserSpec{Name: fmt.Sprintf("u%04d", i), DefaultAccount: fmt.Sprintf("t%04d", i/3)}
	}
	return out
}

// TestCreateUsersChunked (issue 25 item 9): 3,000 users against a
// slurmrestd that takes 0.4 ms per user (1.2 s in one request, over the
// 300 ms timeout) are written in requests of at most BulkChunk users, each
// well within the timeout. Before, the one request of 3,000 timed out.
func TestCreateUsersChunked(t *testing.T) {
	s := &slowUsers{perUser: 400 * time.Microsecond, users: map[string]string{}}
	c := testClient(t, startFake(t, &fake{h: s.handle}).URL, nil)
	if err := c.CreateUsers(context.Background(), userSpecs(3000)); err != nil {
		t.Fatalf("CreateUsers of 3,000: %v", err)
	}
	if len(s.users) != 3000 {
		t.Errorf("%d users written; want 3000", len(s.users))
	}
	for _, n := range s.posts {
		if n > DefaultBulkChunk {
			t.Errorf("a request of %d users; want at most %d", n, DefaultBulkChunk)
		}
	}
}

// TestCreateUsersReadsBackAfterTimeout: a request that times out is
// followed by a read of the users; what Slurm committed is not sent again,
// what it did not is sent again (in halves); what can never be written
// fails, saying how much.
func TestCreateUsersReadsBackAfterTimeout(t *testing.T) {
	cases := map[string]struct {
		lose, lateCommit int
		wantPosts        []int
		wantErr          string
	}{
		"committed, answer lost": {lateCommit: 1, wantPosts: []int{100}},
		"not committed":          {lose: 1, wantPosts: []int{100, 50, 50}},
		"never committed":        {lose: 100, wantPosts: []int{100, 50, 25}, wantErr: "read back: 25 of the request's 25 object(s) not written"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &slowUsers{users: map[string]string{}, lose: tc.lose, lateCommit: tc.lateCommit}
			c := testClient(t, startFake(t, &fake{h: s.handle}).URL, nil)
			err := c.CreateUsers(context.Background(), userSpecs(100))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("CreateUsers: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("CreateUsers: %v; want an error saying %q", err, tc.wantErr)
			}
			if fmt.Sprint(s.posts[:min(len(s.posts), len(tc.wantPosts))]) != fmt.Sprint(tc.wantPosts) {
				t.Errorf("requests of %v users; want %v", s.posts, tc.wantPosts)
			}
			if tc.wantErr == "" && len(s.users) != 100 {
				t.Errorf("%d users in Slurm; want 100", len(s.users))
			}
		})
	}
}
