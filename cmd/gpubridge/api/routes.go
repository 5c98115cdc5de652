package api

import "github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"

// The API's routes: what the OpenAPI file describes.

// routes is the API: every route the OpenAPI file describes, and no other.
func (s *Server) routes() []route {
	return []route{
		{Method: "GET", Path: "/api/v1/tenants", Scope: token.Read, Params: []string{"tenant"}, Handle: s.listTenants},
		{Method: "GET", Path: "/api/v1/pool", Scope: token.Admin, Handle: s.pool},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}", Scope: token.Read, Handle: s.getTenant},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/quota", Scope: token.Read, Handle: s.quota},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/usage", Scope: token.Read, Params: []string{"period"}, Handle: s.tenantUsage},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/burst", Scope: token.Read, Handle: s.burst},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/jobs/pending", Scope: token.Read, Params: []string{"limit"}, Handle: s.pendingJobs},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/bookings", Scope: token.Read, Params: []string{"state", "from", "to", "limit"}, Handle: s.listBookings},
		{Method: "POST", Path: "/api/v1/tenants/{tenant}/bookings", Scope: token.Book, Handle: s.addBooking},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/bookings/{id}", Scope: token.Read, ObjectFirst: true, Handle: s.getBooking},
		{Method: "PATCH", Path: "/api/v1/tenants/{tenant}/bookings/{id}", Scope: token.Book, ObjectFirst: true, Handle: s.modifyBooking},
		{Method: "DELETE", Path: "/api/v1/tenants/{tenant}/bookings/{id}", Scope: token.Book, ObjectFirst: true, Handle: s.cancelBooking},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/availability", Scope: token.Read, Params: []string{"type", "from", "to", "step"}, Handle: s.availability},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/booking-policy", Scope: token.Read, Handle: s.bookingPolicy},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/tokens", Scope: token.Read, Handle: s.listTokens},
		{Method: "POST", Path: "/api/v1/tenants/{tenant}/tokens", Scope: token.Read, Handle: s.addToken},
		{Method: "DELETE", Path: "/api/v1/tenants/{tenant}/tokens/{name}", Scope: token.Read, Handle: s.deleteToken},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/members", Scope: token.Read, Handle: s.listMembers},
		{Method: "POST", Path: "/api/v1/tenants/{tenant}/members", Scope: token.Read, Handle: s.postMember},
		{Method: "DELETE", Path: "/api/v1/tenants/{tenant}/members/{user}", Scope: token.Read, Handle: s.deleteMember},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/nodes", Scope: token.Read, Handle: s.nodeHealth},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/checks", Scope: token.Read, Params: []string{"node", "check", "since", "limit"}, Handle: s.healthResults},
		{Method: "POST", Path: "/api/v1/tenants/{tenant}/checks", Scope: token.Book, Handle: s.triggerCheck},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/checks/runs/{id}", Scope: token.Read, Handle: s.healthRun},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/health/history", Scope: token.Read, Params: []string{"since"}, Handle: s.healthHistory},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/chargeback", Scope: token.Read, Params: []string{"period", "format"}, Handle: s.chargeback},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/events", Scope: token.Read, Handle: s.events},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/slots", Scope: token.Read, Params: []string{"type", "count", "duration", "after", "limit"}, Handle: s.slots},
	}
}

// Routes lists the API's routes as "METHOD /path" (the OpenAPI test).
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.routes() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}
