package api

import (
	"net/http"
	"time"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// The tenant and pool routes: read from the snapshot.

// TenantView is a tenant as its token sees it.
type TenantView struct {
	Name         string       `json:"name"`
	Description  string       `json:"description,omitempty"`
	Organization string       `json:"organization,omitempty"`
	State        tenant.State `json:"state"`
	Users        []string     `json:"users"`
	Quota        []TypeUse    `json:"quota"`
	Burst        BurstPolicy  `json:"burst"`
	AsOf         time.Time    `json:"asOf"`
}

// BurstPolicy is a tenant's burst policy.
type BurstPolicy struct {
	Enabled         bool   `json:"enabled"`
	MaxOnDemandGPUs int64  `json:"maxOnDemandGPUs"`
	MonthlyBudget   string `json:"monthlyBudget,omitempty"`
}

func (s *Server) tenantView(snap *Snapshot, t tenant.Tenant) TenantView {
	v := TenantView{Name: t.Name, Description: t.Description, Organization: t.Organization, State: t.State,
		Users: t.Users, Quota: snap.Use[t.Name], AsOf: snap.At,
		Burst: BurstPolicy{Enabled: t.Burst.Enabled, MaxOnDemandGPUs: t.Burst.MaxOnDemandGPUs}}
	if v.Users == nil {
		v.Users = []string{}
	}
	if v.Quota == nil {
		v.Quota = []TypeUse{}
	}
	if b := t.Burst.MonthlyBudget; b != nil {
		v.Burst.MonthlyBudget = b.String()
	}
	return v
}

func (s *Server) listTenants(q *req) (int, any, error) {
	out := []TenantView{}
	for _, t := range q.snap.Tenants {
		if q.tok.Scope == token.Admin || t.Name == q.tok.Tenant {
			if v := q.r.URL.Query().Get("tenant"); v != "" && v != t.Name {
				continue
			}
			out = append(out, s.tenantView(q.snap, t))
		}
	}
	return http.StatusOK, map[string]any{"tenants": out, "asOf": q.snap.At}, nil
}

func (s *Server) getTenant(q *req) (int, any, error) {
	t, _ := q.snap.Tenant(q.tenant)
	return http.StatusOK, s.tenantView(q.snap, t), nil
}

func (s *Server) quota(q *req) (int, any, error) {
	v := s.tenantView(q.snap, must(q.snap.Tenant(q.tenant)))
	return http.StatusOK, map[string]any{"tenant": q.tenant, "asOf": q.snap.At, "types": v.Quota}, nil
}

func must[T any](v T, _ bool) T { return v }

// PoolView is the whole pool now, for admins.
type PoolView struct {
	AsOf    time.Time         `json:"asOf"`
	Types   []PoolType        `json:"types"`
	Tenants []TenantView      `json:"tenants"`
	Errors  map[string]string `json:"errors,omitempty"`
}

func (s *Server) pool(q *req) (int, any, error) {
	v := PoolView{AsOf: q.snap.At, Types: q.snap.Pool, Tenants: []TenantView{}, Errors: q.snap.Errors}
	if v.Types == nil {
		v.Types = []PoolType{}
	}
	for _, t := range q.snap.Tenants {
		v.Tenants = append(v.Tenants, s.tenantView(q.snap, t))
	}
	return http.StatusOK, v, nil
}
