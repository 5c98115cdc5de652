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

// CreateUsers creates users in one request (POST /slurmdb/{v}/users/); for
// users that exist it sets the default account. The request is all or
// nothing (*BulkError).
func (c *Client) CreateUsers(ctx context.Context, specs []UserSpec) error {
	if len(specs) == 0 {
		return nil
	}
	body := usersResp{}
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		if s.Name == "" {
			return fmt.Errorf("create users: %w: a user has no name", ErrInvalid)
		}
		w := wUser{Name: s.Name}
		w.Default.Account = s.DefaultAccount
		body.Users = append(body.Users, w)
		names = append(names, s.Name)
	}
	if err := c.do(ctx, http.MethodPost, c.dbPath("users/"), nil, struct {
		Users []wUser `json:"users"`
	}{body.Users}, nil); err != nil {
		return bulkError("create or update users", names, err)
	}
	return nil
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
