package api

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// fakeMemberCases edits the harness's tenant list as the CLI's add user
// and delete user edit the tenant store (tenant.AddUser, RemoveUser),
// recording each change's actor as the audit log would.
type fakeMemberCases struct {
	ts    *countingTenants
	mu    sync.Mutex
	audit []string // "actor action tenant user"
}

func (f *fakeMemberCases) edit(actor, action, name string, change func(tenant.Tenant) tenant.Tenant) (bool, error) {
	f.ts.mu.Lock()
	defer f.ts.mu.Unlock()
	i := slices.IndexFunc(f.ts.ts, func(t tenant.Tenant) bool { return t.Name == name })
	if i < 0 {
		return false, ErrNotFound
	}
	next := change(f.ts.ts[i])
	if len(tenant.Changes(f.ts.ts[i], next)) == 0 {
		return false, nil
	}
	ts := slices.Clone(f.ts.ts)
	ts[i] = next
	f.ts.ts = ts
	f.mu.Lock()
	f.audit = append(f.audit, actor+" "+action+" "+name)
	f.mu.Unlock()
	return true, nil
}

func (f *fakeMemberCases) AddMember(_ context.Context, actor, name, user string) (bool, error) {
	if msg := tenant.CheckUser(user); msg != "" {
		return false, InputError(&tenant.Problems{{Field: "user", Msg: msg}})
	}
	return f.edit(actor, "add "+user, name, func(t tenant.Tenant) tenant.Tenant { return tenant.AddUser(t, user, false) })
}

func (f *fakeMemberCases) RemoveMember(_ context.Context, actor, name, user string) error {
	_, err := f.edit(actor, "remove "+user, name, func(t tenant.Tenant) tenant.Tenant { return tenant.RemoveUser(t, user) })
	return err
}

func (f *fakeMemberCases) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.audit)
}

// TestMembersAPI: acme's admin carol lists, adds and removes acme's
// members through the API, audited as user carol; an added member signs
// in at once and a removed one is refused at once; a member, a tenant's
// token, carol on beta, and carol removing an admin are refused.
func TestMembersAPI(t *testing.T) {
	h := newHarness(t)
	mc := h.srv.o.MemberCases.(*fakeMemberCases)
	carol := slurmJWT(t, testJWTKey, "carol", h.now, time.Hour)
	frank := slurmJWT(t, testJWTKey, "frank", h.now, time.Hour)
	code, body := h.do("GET", "/api/v1/tenants/acme/members", carol, "")
	if code != 200 || body != `{"members":[{"user":"alice","admin":false},{"user":"carol","admin":true}],"tenant":"acme"}`+"\n" {
		t.Errorf("carol lists acme's members: %d %s", code, body)
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme", frank, ""); code != 403 {
		t.Fatalf("frank before he is added: %d; want 403", code)
	}
	if code, body := h.do("POST", "/api/v1/tenants/acme/members", carol, `{"user":"frank"}`); code != 201 || !strings.Contains(body, `"added":true`) {
		t.Errorf("add frank: %d %s", code, body)
	}
	if code, body := h.do("GET", "/api/v1/tenants/acme/bookings", frank, ""); code != 200 {
		t.Errorf("frank once added: %d; want 200 at once\n%s", code, body)
	}
	if code, body := h.do("POST", "/api/v1/tenants/acme/members", carol, `{"user":"frank"}`); code != 200 || !strings.Contains(body, `"added":false`) {
		t.Errorf("add frank again: %d %s", code, body)
	}
	for name, c := range map[string]struct {
		method, path, tok, body string
		want                    int
	}{
		"upper-case name":     {"POST", "/api/v1/tenants/acme/members", carol, `{"user":"Frank"}`, 400},
		"unknown field":       {"POST", "/api/v1/tenants/acme/members", carol, `{"user":"gil","admin":"yes"}`, 400},
		"an admin":            {"DELETE", "/api/v1/tenants/acme/members/carol", carol, "", 403},
		"not a member":        {"DELETE", "/api/v1/tenants/acme/members/nobody", carol, "", 404},
		"beta's user on acme": {"DELETE", "/api/v1/tenants/acme/members/bsecretuser", carol, "", 404},
		"member lists":        {"GET", "/api/v1/tenants/acme/members", slurmJWT(t, testJWTKey, "alice", h.now, time.Hour), "", 403},
		"member adds":         {"POST", "/api/v1/tenants/acme/members", slurmJWT(t, testJWTKey, "alice", h.now, time.Hour), `{"user":"gil"}`, 403},
		"member removes":      {"DELETE", "/api/v1/tenants/acme/members/frank", slurmJWT(t, testJWTKey, "alice", h.now, time.Hour), "", 403},
		"tenant token":        {"POST", "/api/v1/tenants/acme/members", h.acmeBook, `{"user":"gil"}`, 403},
		"carol on beta":       {"POST", "/api/v1/tenants/beta/members", carol, `{"user":"gil"}`, 404},
		"carol lists beta":    {"GET", "/api/v1/tenants/beta/members", carol, "", 404},
		"beta's token":        {"GET", "/api/v1/tenants/acme/members", h.betaBook, "", 404},
		"no sign-in":          {"GET", "/api/v1/tenants/acme/members", "", "", 401},
	} {
		if code, body := h.do(c.method, c.path, c.tok, c.body); code != c.want || strings.Contains(body, "bsecret") {
			t.Errorf("%s: %d; want %d\n%s", name, code, c.want, body)
		}
	}
	if code, body := h.do("GET", "/api/v1/tenants/beta/members", h.admin, ""); code != 200 || !strings.Contains(body, "bsecretuser") {
		t.Errorf("an admin token on beta's members: %d %s", code, body)
	}
	if code, body := h.do("DELETE", "/api/v1/tenants/acme/members/frank", carol, ""); code != 200 || !strings.Contains(body, `"removed":true`) {
		t.Errorf("remove frank: %d %s", code, body)
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme/bookings", frank, ""); code != 403 {
		t.Errorf("frank once removed: %d; want 403 at once", code)
	}
	if got, want := mc.log(), []string{"user carol add frank acme", "user carol remove frank acme"}; !slices.Equal(got, want) {
		t.Errorf("audit %q; want %q", got, want)
	}
}

// TestMembersPortal: carol manages acme's members on the portal (a link
// from the overview, a page listing them, forms with the CSRF token);
// frank, added, signs in, and his session is refused on its next request
// once carol removes him; alice (a member) gets no link and is refused;
// a forged CSRF changes nothing; a bad name is shown escaped.
func TestMembersPortal(t *testing.T) {
	h := newHarness(t)
	b := ownBrowser(h)
	csrf := b.signIn(slurmJWT(t, testJWTKey, "carol", h.now, time.Hour))
	if _, page := b.get("/"); !strings.Contains(page, `href="/members?tenant=acme"`) {
		t.Errorf("carol's overview has no members link")
	}
	code, page := b.get("/members?tenant=acme")
	if code != 200 || !strings.Contains(page, `<tr data-user="alice">`) || !strings.Contains(page, `<tr data-user="carol">`) || strings.Contains(page, "bsecret") {
		t.Fatalf("members page: %d\n%s", code, page)
	}
	if code, _, _ := b.post("/members", url.Values{"csrf": {"forged"}, "tenant": {"acme"}, "user": {"frank"}}); code != 403 {
		t.Errorf("forged CSRF: %d", code)
	}
	if code, _, loc := b.post("/members", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "user": {"frank"}}); code != http.StatusSeeOther || !strings.Contains(loc, "added=frank") {
		t.Fatalf("add frank: %d %s", code, loc)
	}
	if _, page := b.get("/members?tenant=acme&added=frank"); !strings.Contains(page, `<tr data-user="frank">`) || !strings.Contains(page, "frank is a member now") {
		t.Errorf("after adding frank:\n%s", page)
	}
	if code, page, _ := b.post("/members", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "user": {"<b>x</b>"}}); code != 400 || strings.Contains(page, "<b>x</b>") || !strings.Contains(page, "&lt;b&gt;") {
		t.Errorf("a bad name: %d\n%s", code, page)
	}
	fb := ownBrowser(h)
	fb.signIn(slurmJWT(t, testJWTKey, "frank", h.now, time.Hour))
	if code, _, _ := b.post("/members/delete", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "user": {"carol"}}); code != 403 {
		t.Errorf("carol removes an admin (herself): %d", code)
	}
	if code, page, loc := b.post("/members/delete", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "user": {"frank"}}); code != http.StatusSeeOther || !strings.Contains(loc, "removed=frank") {
		t.Fatalf("remove frank: %d %s\n%s", code, loc, page)
	}
	if code, page := fb.get("/"); code != 403 || !strings.Contains(page, "not a member") {
		t.Errorf("frank's session after his removal: %d\n%.300s", code, page)
	}
	if code, _ := fb.get("/portal/free"); code != 403 {
		t.Errorf("frank's calendar refresh after his removal: %d", code)
	}
	a := ownBrowser(h)
	acsrf := a.signIn(slurmJWT(t, testJWTKey, "alice", h.now, time.Hour))
	if _, page := a.get("/"); strings.Contains(page, "/members") {
		t.Error("a member sees the members link")
	}
	if code, _ := a.get("/members?tenant=acme"); code != 403 {
		t.Errorf("alice's members page: %d", code)
	}
	if code, _, _ := a.post("/members", url.Values{"csrf": {acsrf}, "tenant": {"acme"}, "user": {"gil"}}); code != 403 {
		t.Errorf("alice adds a member: %d", code)
	}
	if code, _, _ := a.post("/members/delete", url.Values{"csrf": {acsrf}, "tenant": {"acme"}, "user": {"alice"}}); code != 403 {
		t.Errorf("alice removes a member: %d", code)
	}
}

// ownBrowser is newBrowser on a client of its own (newBrowser sets the
// jar of the test server's one client: browsers used at once would share
// their cookies).
func ownBrowser(h *harness) *browser {
	b := newBrowser(h)
	c := *b.c
	jar, _ := cookiejar.New(nil)
	c.Jar = jar
	b.c = &c
	return b
}
