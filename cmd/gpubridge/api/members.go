package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// The members routes and page: a tenant admin (a person in the tenant
// spec's admins) lists its tenant's members and adds and removes members
// (Slurm users) through the use cases of the CLI's add user and delete
// user (cmd/gpubridge/app: the change lands in the tenant spec's users,
// so the next reconcile adds the association and never plans it for
// deletion), the audit log naming the person. A tenant admin adds plain
// members only and removes plain members only: the tenant's admins are
// the site's to change (gpubridge modify tenant). An admin token may do
// all of it; a member, a tenant's token, another tenant's admin may not
// (403, or 404 for another tenant as every route).

// MemberCases are the CLI's add user and delete user use cases for a
// tenant's members. An error in what the client gave comes back as
// InputError.
type MemberCases interface {
	AddMember(ctx context.Context, actor, tenant, user string) (changed bool, err error)
	RemoveMember(ctx context.Context, actor, tenant, user string) error
}

// errNotMemberAdmin: the members routes need the tenant's admin.
var errNotMemberAdmin = errors.New("only the tenant's admins (signed in with their Slurm token) manage its members")

// errAdminMember: a tenant's admins are the site's to change.
var errAdminMember = errors.New("this user is an admin of the tenant; the site's admin changes admins (gpubridge modify tenant NAME set admins=...)")

// Member is one member of a tenant as the members routes answer it.
type Member struct {
	User  string `json:"user"`
	Admin bool   `json:"admin"`
}

// memberCases refuses (403) a sign-in that is not the tenant's admin (or
// an admin token), and answers 503 without member use cases.
func (s *Server) memberCases(tok token.Token, tenantName string) (MemberCases, error) {
	if tok.Scope != token.Admin && !slices.Contains(tok.AdminOf, tenantName) {
		return nil, &httpError{http.StatusForbidden, errorBody{Error: errNotMemberAdmin.Error()}}
	}
	if s.o.MemberCases == nil || s.o.Members == nil {
		return nil, errUnavailable
	}
	return s.o.MemberCases, nil
}

// tenantMembers reads the tenant's members from the tenant list, afresh.
func (s *Server) tenantMembers(ctx context.Context, name string) ([]Member, error) {
	ts, err := s.o.Members.List(ctx)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(ts, func(t tenant.Tenant) bool { return t.Name == name })
	if i < 0 {
		return nil, errNotFound
	}
	t := ts[i]
	users := slices.Concat(t.Users, t.Admins)
	slices.Sort(users)
	out := []Member{}
	for _, u := range slices.Compact(users) {
		out = append(out, Member{User: u, Admin: slices.Contains(t.Admins, u)})
	}
	return out, nil
}

// addMember adds user to tenantName as a plain member for tok's person
// (the audit log's actor); the members' cache is dropped, so the change
// counts at once here.
func (s *Server) addMember(ctx context.Context, tok token.Token, tenantName, user string) (bool, error) {
	mc, err := s.memberCases(tok, tenantName)
	if err != nil {
		return false, err
	}
	changed, err := mc.AddMember(ctx, tok.Actor(), tenantName, user)
	s.memberCache.forget(struct{}{})
	if err == nil {
		s.o.Logger.Info("member added", "tenant", tenantName, "user", user, "actor", tok.Actor())
	}
	return changed, err
}

// removeMember removes plain member user from tenantName: 404 for a user
// who is not a member, 403 for an admin of the tenant; a person removed
// loses access to it on the next request (their sessions included).
func (s *Server) removeMember(ctx context.Context, tok token.Token, tenantName, user string) error {
	mc, err := s.memberCases(tok, tenantName)
	if err != nil {
		return err
	}
	ms, err := s.tenantMembers(ctx, tenantName)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ms, func(m Member) bool { return m.User == user })
	switch {
	case i < 0:
		return errNotFound
	case ms[i].Admin:
		return &httpError{http.StatusForbidden, errorBody{Error: errAdminMember.Error()}}
	}
	err = mc.RemoveMember(ctx, tok.Actor(), tenantName, user)
	s.memberCache.forget(struct{}{})
	if err == nil {
		s.o.Logger.Info("member removed", "tenant", tenantName, "user", user, "actor", tok.Actor())
	}
	return err
}

// listMembers answers the tenant's members (its admin's view).
func (s *Server) listMembers(q *req) (int, any, error) {
	if _, err := s.memberCases(q.tok, q.tenant); err != nil {
		return 0, nil, err
	}
	ms, err := s.tenantMembers(q.r.Context(), q.tenant)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"tenant": q.tenant, "members": ms}, nil
}

// postMember adds the body's user: 201 when added, 200 when the user was
// a member already.
func (s *Server) postMember(q *req) (int, any, error) {
	if _, err := s.memberCases(q.tok, q.tenant); err != nil {
		return 0, nil, err
	}
	fields, err := bookingFields(q.w, q.r, []string{"user"})
	if err != nil {
		return 0, nil, err
	}
	changed, err := s.addMember(q.r.Context(), q.tok, q.tenant, fields["user"])
	if err != nil {
		return 0, nil, err
	}
	code := http.StatusOK
	if changed {
		code = http.StatusCreated
	}
	return code, map[string]any{"tenant": q.tenant, "user": fields["user"], "added": changed}, nil
}

// deleteMember removes the path's user.
func (s *Server) deleteMember(q *req) (int, any, error) {
	user := q.r.PathValue("user")
	if err := s.removeMember(q.r.Context(), q.tok, q.tenant, user); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"tenant": q.tenant, "user": user, "removed": true}, nil
}

// membersRoutes mounts the members page and its forms.
func (s *Server) membersRoutes(mux *http.ServeMux, cop *http.CrossOriginProtection) {
	mux.Handle("GET /members", s.portalHandler("/members", s.membersPage))
	mux.Handle("POST /members", cop.Handler(s.portalHandler("/members", s.addPortalMember)))
	mux.Handle("POST /members/delete", cop.Handler(s.portalHandler("/members/delete", s.deletePortalMember)))
}

// membersPageData is the members page's.
type membersPageData struct {
	Tenant, CSRF, Person, Notice string
	Members                      []Member
}

// membersPage lists the tenant's members with a form to add one and a
// button to remove each plain member.
func (s *Server) membersPage(p *portalPage) int {
	if _, err := s.memberCases(p.tok, p.tok.Tenant); err != nil {
		return s.refused(p, err)
	}
	ms, err := s.tenantMembers(p.r.Context(), p.tok.Tenant)
	if err != nil {
		return s.refused(p, err)
	}
	d := membersPageData{Tenant: p.tok.Tenant, CSRF: p.ss.CSRF, Person: p.tok.Person, Members: ms}
	q := p.r.URL.Query()
	switch {
	case q.Get("added") != "":
		d.Notice = q.Get("added") + " is a member now; Slurm gets the association at the next reconcile."
	case q.Get("removed") != "":
		d.Notice = q.Get("removed") + " is no longer a member."
	}
	s.render(p.w, http.StatusOK, "members", d)
	return http.StatusOK
}

// addPortalMember adds the form's user and shows the members again.
func (s *Server) addPortalMember(p *portalPage) int {
	user := p.r.PostFormValue("user")
	if _, err := s.addMember(p.r.Context(), p.tok, p.tok.Tenant, user); err != nil {
		return s.refused(p, err)
	}
	http.Redirect(p.w, p.r, "/members?"+url.Values{"tenant": {p.tok.Tenant}, "added": {user}}.Encode(), http.StatusSeeOther)
	return http.StatusSeeOther
}

// deletePortalMember removes the form's user and shows the members again.
func (s *Server) deletePortalMember(p *portalPage) int {
	user := p.r.PostFormValue("user")
	if err := s.removeMember(p.r.Context(), p.tok, p.tok.Tenant, user); err != nil {
		return s.refused(p, err)
	}
	http.Redirect(p.w, p.r, "/members?"+url.Values{"tenant": {p.tok.Tenant}, "removed": {user}}.Encode(), http.StatusSeeOther)
	return http.StatusSeeOther
}
