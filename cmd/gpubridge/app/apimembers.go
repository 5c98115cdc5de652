package app

import (
	"context"
	"errors"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/api"
)

// apiMembers are add user and delete user (AddUser, RemoveUser: the
// tenant spec's users, reconciled like any tenant change) as the API's
// MemberCases, for a tenant admin of the portal or the API: plain members
// only, the person as the audit log's actor. An input error is the
// client's (400).
type apiMembers struct{ e *Env }

// memberWhat names the API's member changes to the writer lock.
const memberWhat = "tenant member (portal)"

func (a apiMembers) AddMember(ctx context.Context, actor, tenant, user string) (bool, error) {
	c, err := a.e.AddUser(ctx, UserRequest{What: memberWhat, User: user, Tenant: tenant, Actor: actor})
	if errors.Is(err, ErrInput) {
		return false, api.InputError(err)
	}
	return c.Changed, err
}

func (a apiMembers) RemoveMember(ctx context.Context, actor, tenant, user string) error {
	_, err := a.e.RemoveUser(ctx, UserRequest{What: memberWhat, User: user, Tenant: tenant, Actor: actor})
	if errors.Is(err, ErrInput) {
		return api.InputError(err)
	}
	return err
}
