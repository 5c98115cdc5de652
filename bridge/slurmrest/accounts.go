package slurmrest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Account is a slurmdbd account.
type Account struct {
	Name         string
	Description  string
	Organization string
	Coordinators []string // direct coordinators (user names), not inherited ones
	Deleted      bool
}

// AccountSpec is an account to create, with its association on the
// client's cluster under Parent.
type AccountSpec struct {
	Name         string
	Description  string // default: the name
	Organization string // default: the name
	Parent       string // parent account; default root
}

type wAccount struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Organization string   `json:"organization"`
	Coordinators []wCoord `json:"coordinators,omitempty"`
	Flags        []string `json:"flags,omitempty"`
}

type wCoord struct {
	Name   string `json:"name"`
	Direct bool   `json:"direct,omitempty"`
}

type accountsResp struct {
	envelope
	Accounts []wAccount `json:"accounts"`
}

// ListAccounts returns every account with its coordinators
// (GET /slurmdb/{v}/accounts/).
func (c *Client) ListAccounts(ctx context.Context) ([]Account, error) {
	var resp accountsResp
	q := url.Values{"WithCoordinators": {"true"}}
	if err := c.do(ctx, http.MethodGet, c.dbPath("accounts/"), q, nil, &resp); err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	out := make([]Account, 0, len(resp.Accounts))
	for _, w := range resp.Accounts {
		out = append(out, accountFromWire(w))
	}
	return out, nil
}

// CreateAccounts creates accounts and their cluster associations
// (POST /slurmdb/{v}/accounts_association/, one request per distinct
// parent, description and organization). Creating an account that exists
// adds its cluster association if missing and changes nothing else.
func (c *Client) CreateAccounts(ctx context.Context, specs []AccountSpec) error {
	type group struct{ parent, desc, org string }
	byGroup := map[group][]string{}
	var order []group
	for _, s := range specs {
		if s.Name == "" {
			return fmt.Errorf("create accounts: %w: an account has no name", ErrInvalid)
		}
		g := group{s.Parent, s.Description, s.Organization}
		if g.parent == "" {
			g.parent = "root"
		}
		if g.desc == "" {
			g.desc = s.Name
		}
		if g.org == "" {
			g.org = s.Name
		}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], s.Name)
	}
	for _, g := range order {
		body := map[string]any{
			"association_condition": map[string]any{
				"accounts":    byGroup[g],
				"clusters":    []string{c.cluster},
				"association": map[string]any{"parent": g.parent},
			},
			"account": map[string]any{"description": g.desc, "organization": g.org},
		}
		if err := c.do(ctx, http.MethodPost, c.dbPath("accounts_association/"), nil, body, nil); err != nil {
			return fmt.Errorf("create accounts %s under %s: %w", strings.Join(byGroup[g], ","), g.parent, err)
		}
	}
	return nil
}

// DeleteAccount deletes an account and its associations
// (DELETE /slurmdb/{v}/account/{name}).
func (c *Client) DeleteAccount(ctx context.Context, name string) error {
	if name == "" || name == "root" {
		return fmt.Errorf("delete account: %w: refusing to delete %q", ErrInvalid, name)
	}
	var resp struct {
		envelope
		Removed []string `json:"removed_accounts"`
	}
	if err := c.do(ctx, http.MethodDelete, c.dbPath("account/%s", url.PathEscape(name)), nil, nil, &resp); err != nil {
		return fmt.Errorf("delete account %q: %w", name, err)
	}
	return nil
}

// GetAccount returns one account with its coordinators; ErrNotFound
// when there is none. It reads the list: GET /account/{name} ignores
// WithCoordinators and never returns coordinators.
func (c *Client) GetAccount(ctx context.Context, name string) (Account, error) {
	all, err := c.ListAccounts(ctx)
	if err != nil {
		return Account{}, fmt.Errorf("get account %q: %w", name, err)
	}
	for _, a := range all {
		if a.Name == name {
			return a, nil
		}
	}
	return Account{}, fmt.Errorf("get account %q: %w", name, ErrNotFound)
}

func accountFromWire(w wAccount) Account {
	a := Account{Name: w.Name, Description: w.Description, Organization: w.Organization, Deleted: slices.Contains(w.Flags, "DELETED")}
	for _, co := range w.Coordinators {
		if co.Direct {
			a.Coordinators = append(a.Coordinators, co.Name)
		}
	}
	return a
}

// AddCoordinators makes users coordinators of account. Slurm's REST API
// has no coordinator endpoint: POST accounts/ REPLACES an account's
// coordinator list (and clears it when the list is left out), so this
// reads the account, and writes the union only when it differs (a second
// call makes no write).
func (c *Client) AddCoordinators(ctx context.Context, account string, users []string) error {
	return c.changeCoordinators(ctx, account, users, true)
}

// RemoveCoordinators removes users from account's coordinators (read, then
// one write only when something changes).
func (c *Client) RemoveCoordinators(ctx context.Context, account string, users []string) error {
	return c.changeCoordinators(ctx, account, users, false)
}

func (c *Client) changeCoordinators(ctx context.Context, account string, users []string, add bool) error {
	verb := "add"
	if !add {
		verb = "remove"
	}
	if account == "" || slices.Contains(users, "") {
		return fmt.Errorf("%s coordinators: %w: empty account or user name", verb, ErrInvalid)
	}
	acct, err := c.GetAccount(ctx, account)
	if err != nil {
		return fmt.Errorf("%s coordinators of %q: %w", verb, account, err)
	}
	next := slices.Clone(acct.Coordinators)
	for _, u := range users {
		has := slices.Contains(next, u)
		switch {
		case add && !has:
			next = append(next, u)
		case !add && has:
			next = slices.DeleteFunc(next, func(x string) bool { return x == u })
		}
	}
	if len(next) == len(acct.Coordinators) {
		return nil // nothing changes
	}
	type wAcctCoords struct {
		Name         string   `json:"name"`
		Description  string   `json:"description"`
		Organization string   `json:"organization"`
		Coordinators []wCoord `json:"coordinators"`
	}
	w := wAcctCoords{Name: acct.Name, Description: acct.Description, Organization: acct.Organization, Coordinators: []wCoord{}}
	for _, u := range next {
		w.Coordinators = append(w.Coordinators, wCoord{Name: u})
	}
	body := struct {
		Accounts []wAcctCoords `json:"accounts"`
	}{[]wAcctCoords{w}}
	if err := c.do(ctx, http.MethodPost, c.dbPath("accounts/"), nil, body, nil); err != nil {
		return fmt.Errorf("%s coordinators %s of %q: %w", verb, strings.Join(users, ","), account, err)
	}
	return nil
}
