package slurmrest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// User is a slurmdbd user.
type User struct {
	Name           string
	DefaultAccount string
	AdminLevel     string   // None, Operator, Administrator
	Coordinates    []string // accounts the user coordinates
}

// UserSpec is a user to create (or update).
type UserSpec struct {
	Name           string
	DefaultAccount string
}

type wUser struct {
	Name       string   `json:"name"`
	AdminLevel []string `json:"administrator_level,omitempty"`
	Default    struct {
		Account string `json:"account,omitempty"`
	} `json:"default"`
	Coordinators []wCoord `json:"coordinators,omitempty"`
}

type usersResp struct {
	envelope
	Users []wUser `json:"users"`
}

// ListUsers returns every user with the accounts they coordinate
// (GET /slurmdb/{v}/users/).
func (c *Client) ListUsers(ctx context.Context) ([]User, error) {
	var resp usersResp
	// Slurm fills default.account only with with_assocs.
	q := url.Values{"with_coords": {"true"}, "with_assocs": {"true"}}
	if err := c.do(ctx, http.MethodGet, c.dbPath("users/"), q, nil, &resp); err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	out := make([]User, 0, len(resp.Users))
	for _, w := range resp.Users {
		u := User{Name: w.Name, DefaultAccount: w.Default.Account}
		if len(w.AdminLevel) > 0 {
			u.AdminLevel = w.AdminLevel[0]
		}
		for _, co := range w.Coordinators {
			if co.Direct {
				u.Coordinates = append(u.Coordinates, co.Name)
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// CreateUsers creates users (POST /slurmdb/{v}/users/, in requests of at
// most Options.BulkChunk users); for users that exist it sets the default
// account. Each request is all or nothing (*BulkError); after one that
// timed out, the users are read back and those Slurm does not hold as
// asked are sent again (chunked).
func (c *Client) CreateUsers(ctx context.Context, specs []UserSpec) error {
	if len(specs) == 0 {
		return nil
	}
	for _, s := range specs {
		if s.Name == "" {
			return fmt.Errorf("create users: %w: a user has no name", ErrInvalid)
		}
	}
	return chunked(ctx, c, "create or update users", specs, c.postUsers, c.usersLeft)
}

// postUsers sends one request of users.
func (c *Client) postUsers(ctx context.Context, specs []UserSpec) error {
	body := make([]wUser, 0, len(specs))
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		w := wUser{Name: s.Name}
		w.Default.Account = s.DefaultAccount
		body = append(body, w)
		names = append(names, s.Name)
	}
	if err := c.do(ctx, http.MethodPost, c.dbPath("users/"), nil, struct {
		Users []wUser `json:"users"`
	}{body}, nil); err != nil {
		return bulkError("create or update users", names, err)
	}
	return nil
}

// usersLeft returns the specs Slurm does not hold as asked: the user
// missing, or with another default account than the one asked.
func (c *Client) usersLeft(ctx context.Context, specs []UserSpec) ([]UserSpec, error) {
	all, err := c.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	have := make(map[string]string, len(all))
	for _, u := range all {
		have[u.Name] = u.DefaultAccount
	}
	var out []UserSpec
	for _, s := range specs {
		d, ok := have[s.Name]
		if !ok || s.DefaultAccount != "" && d != s.DefaultAccount {
			out = append(out, s)
		}
	}
	return out, nil
}

// DeleteUser deletes a user and its associations (DELETE /slurmdb/{v}/user/{name}).
func (c *Client) DeleteUser(ctx context.Context, name string) error {
	if name == "" || name == "root" {
		return fmt.Errorf("delete user: %w: refusing to delete %q", ErrInvalid, name)
	}
	if err := c.do(ctx, http.MethodDelete, c.dbPath("user/%s", url.PathEscape(name)), nil, nil, nil); err != nil {
		return fmt.Errorf("delete user %q: %w", name, err)
	}
	return nil
}
