package slurmrest

import (
	"context"
	"errors"
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

// CreateAccounts creates accounts and their cluster associations under
// their parents. Accounts that exist keep their description, organization
// and coordinators; a missing cluster association is added.
//
// When every account has the same description and organization, that is
// one POST /slurmdb/{v}/accounts_association/ per parent. Otherwise
// (a tenant per account, each with its own description) it is one read of
// the accounts (GET accounts/, so that existing ones are left alone), one
// POST accounts/ carrying every missing account with its own description
// and organization, and one POST accounts_association/ per parent adding
// the cluster associations: three requests for a thousand accounts
// (accounts_association/ takes a single description, and would need a
// request per account). Parents in the batch come before their children.
func (c *Client) CreateAccounts(ctx context.Context, specs []AccountSpec) error {
	if len(specs) == 0 {
		return nil
	}
	b, err := newAccountBatch(specs)
	if err != nil {
		return err
	}
	if b.looks > 1 {
		if err := c.createMissingAccounts(ctx, b.specs); err != nil {
			return err
		}
	}
	for _, p := range b.parents {
		if err := c.associateAccounts(ctx, p, b.byParent[p], b.specs[0]); err != nil {
			return err
		}
	}
	return nil
}

// accountBatch are the accounts of one CreateAccounts, their defaults
// filled in, grouped by parent.
type accountBatch struct {
	specs    []AccountSpec
	parents  []string            // parents in the batch before their children
	byParent map[string][]string // parent -> account names
	looks    int                 // distinct (description, organization) pairs
}

// newAccountBatch fills in the specs' defaults (parent root, description
// and organization the name) and groups them; an account without a name,
// or given twice, is ErrInvalid.
func newAccountBatch(specs []AccountSpec) (accountBatch, error) {
	type look struct{ desc, org string }
	looks := map[look]bool{}
	b := accountBatch{byParent: map[string][]string{}, specs: make([]AccountSpec, 0, len(specs))}
	seen := map[string]bool{}
	for _, s := range specs {
		if s.Name == "" {
			return b, fmt.Errorf("create accounts: %w: an account has no name", ErrInvalid)
		}
		if seen[s.Name] {
			return b, fmt.Errorf("create accounts: %w: account %q given twice", ErrInvalid, s.Name)
		}
		seen[s.Name] = true
		if s.Parent == "" {
			s.Parent = "root"
		}
		if s.Description == "" {
			s.Description = s.Name
		}
		if s.Organization == "" {
			s.Organization = s.Name
		}
		b.specs = append(b.specs, s)
		looks[look{s.Description, s.Organization}] = true
		if _, ok := b.byParent[s.Parent]; !ok {
			b.parents = append(b.parents, s.Parent)
		}
		b.byParent[s.Parent] = append(b.byParent[s.Parent], s.Name)
	}
	b.parents = parentsFirst(b.parents, seen, b.specs)
	b.looks = len(looks)
	return b, nil
}

// createMissingAccounts creates, each with its own description and
// organization, the accounts of specs that do not exist (one read of the
// accounts, then POST accounts/ in chunks); existing ones are left alone.
func (c *Client) createMissingAccounts(ctx context.Context, specs []AccountSpec) error {
	all, err := c.ListAccounts(ctx)
	if err != nil {
		return fmt.Errorf("create accounts: %w", err)
	}
	exists := map[string]bool{}
	for _, a := range all {
		if !a.Deleted {
			exists[a.Name] = true
		}
	}
	var missing []Account
	for _, s := range specs {
		if !exists[s.Name] {
			missing = append(missing, Account{Name: s.Name, Description: s.Description, Organization: s.Organization})
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return chunked(ctx, c, "create accounts", missing, func(ctx context.Context, part []Account) error {
		if err := c.postAccounts(ctx, part); err != nil {
			return bulkError("create accounts", accountNames(part), err)
		}
		return nil
	}, nil)
}

// associateAccounts adds the cluster associations of the accounts under
// parent p, in chunks. With one look, accounts_association/ creates the
// accounts with it (first's description and organization); otherwise
// every account exists now, and accounts_association/ leaves existing
// accounts as they are (their description and organization too) and only
// adds the missing cluster associations.
func (c *Client) associateAccounts(ctx context.Context, p string, accounts []string, first AccountSpec) error {
	op := fmt.Sprintf("create the cluster associations of accounts under %s", p)
	send := func(ctx context.Context, group []string) error {
		body := map[string]any{
			"association_condition": map[string]any{
				"accounts":    group,
				"clusters":    []string{c.clusterFor(ctx)},
				"association": map[string]any{"parent": p},
			},
			"account": map[string]any{"description": first.Description, "organization": first.Organization},
		}
		if err := c.do(ctx, http.MethodPost, c.dbPath("accounts_association/"), nil, body, nil); err != nil {
			return bulkError(op, group, err)
		}
		return nil
	}
	return chunked(ctx, c, op, accounts, send, c.accountsUnclustered)
}

// accountsUnclustered returns the names of accounts without their
// association on the client's cluster.
func (c *Client) accountsUnclustered(ctx context.Context, names []string) ([]string, error) {
	have, err := c.ListAssociations(ctx, AssociationFilter{Clusters: []string{c.clusterFor(ctx)}, Accounts: names, Own: true})
	if err != nil {
		return nil, err
	}
	ok := map[string]bool{}
	for _, a := range have {
		if a.User == "" && a.Partition == "" {
			ok[a.Account] = true
		}
	}
	var out []string
	for _, n := range names {
		if !ok[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

func accountNames(as []Account) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Name
	}
	return out
}

// parentsFirst orders parent names so that a parent that is itself created
// in the batch (under another parent of the batch) comes after that parent.
func parentsFirst(parents []string, inBatch map[string]bool, specs []AccountSpec) []string {
	parentOf := map[string]string{}
	for _, s := range specs {
		parentOf[s.Name] = s.Parent
	}
	depth := func(p string) int {
		d := 0
		for inBatch[p] && d <= len(specs) {
			p = parentOf[p]
			d++
		}
		return d
	}
	out := slices.Clone(parents)
	slices.SortStableFunc(out, func(a, b string) int { return depth(a) - depth(b) })
	return out
}

// DeleteAccounts deletes accounts with their associations, in two
// passes: first their associations on the client's cluster, one
// DELETE /slurmdb/{v}/associations/?account=a,b,... per
// deleteAssocChunk accounts (one slurmdbd commit each); then the
// accounts, one DELETE /slurmdb/{v}/account/{name} per account (the API
// has no bulk delete of accounts), PipelineDepth at a time. Removing an
// association makes slurmdbd send slurmctld an update at commit (about
// 43 ms, serialized); an account without associations needs none, so the
// second pass costs milliseconds per account where deleting accounts with
// their associations one by one costs 44 ms each (docs/scale.md). A
// refused first pass (jobs running in one of the accounts, say) leaves
// those accounts to the second, which reports each one that fails; a
// failed delete does not stop the others (*PipelineError). root and empty
// names are refused before anything is sent.
func (c *Client) DeleteAccounts(ctx context.Context, names []string) error {
	for _, n := range names {
		if n == "" || n == "root" {
			return fmt.Errorf("delete accounts: %w: refusing to delete %q", ErrInvalid, n)
		}
	}
	for i := 0; i < len(names); i += deleteAssocChunk {
		chunk := names[i:min(len(names), i+deleteAssocChunk)]
		_, err := c.DeleteAssociations(ctx, AssociationFilter{Clusters: []string{c.clusterFor(ctx)}, Accounts: chunk})
		var se *SlurmError
		if err != nil && !errors.As(err, &se) {
			return fmt.Errorf("delete accounts: the associations of %s: %w", listNames(chunk, bulkShownNames), err)
		}
	}
	return c.pipeline(ctx, "delete accounts", names, c.DeleteAccount)
}

// deleteAssocChunk is how many accounts one DELETE associations/ names
// (the names travel in the query string).
const deleteAssocChunk = 250

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
	acct.Coordinators = next
	if err := c.postAccounts(ctx, []Account{acct}); err != nil {
		return fmt.Errorf("%s coordinators %s of %q: %w", verb, strings.Join(users, ","), account, err)
	}
	return nil
}

// SetAccounts writes whole account records in one request
// (POST /slurmdb/{v}/accounts/): description, organization and the FULL
// list of direct coordinators of each account. That endpoint replaces an
// account's coordinators, so a user left out of Coordinators stops being a
// coordinator, and an empty list clears them. An empty Description or
// Organization is written as the name (as CreateAccounts does).
//
// It only updates accounts that exist. POST accounts/ would create a
// missing account without any cluster association (an account no user
// association can use, see ErrNoClusterAssociation), so SetAccounts reads
// the accounts first (one GET) and refuses with ErrNotFound, writing
// nothing, when a name does not exist or is deleted; create accounts with
// CreateAccounts. A nil or empty slice sends no request. Names must be
// non-empty and distinct, coordinator names non-empty (ErrInvalid).
func (c *Client) SetAccounts(ctx context.Context, accts []Account) error {
	if len(accts) == 0 {
		return nil
	}
	seen := map[string]bool{}
	for _, a := range accts {
		if a.Name == "" {
			return fmt.Errorf("set accounts: %w: an account has no name", ErrInvalid)
		}
		if seen[a.Name] {
			return fmt.Errorf("set accounts: %w: account %q given twice", ErrInvalid, a.Name)
		}
		seen[a.Name] = true
		if slices.Contains(a.Coordinators, "") {
			return fmt.Errorf("set accounts: %w: account %q has an empty coordinator name", ErrInvalid, a.Name)
		}
	}
	all, err := c.ListAccounts(ctx)
	if err != nil {
		return fmt.Errorf("set accounts: %w", err)
	}
	exists := map[string]bool{}
	for _, a := range all {
		if !a.Deleted {
			exists[a.Name] = true
		}
	}
	var missing []string
	for _, a := range accts {
		if !exists[a.Name] {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("set accounts: account(s) %s: %w (SetAccounts only updates existing accounts; use CreateAccounts)", joinNames(missing, bulkShownNames, ","), ErrNotFound)
	}
	names := make([]string, 0, len(accts))
	for _, a := range accts {
		names = append(names, a.Name)
	}
	if err := c.postAccounts(ctx, accts); err != nil {
		return bulkError("set accounts", names, err)
	}
	return nil
}

// wAcctSet is an account record for POST accounts/: coordinators always
// present (an absent list clears them, and so does an empty one).
type wAcctSet struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Organization string   `json:"organization"`
	Coordinators []wCoord `json:"coordinators"`
}

// postAccounts sends one POST accounts/ with whole records.
func (c *Client) postAccounts(ctx context.Context, accts []Account) error {
	body := struct {
		Accounts []wAcctSet `json:"accounts"`
	}{make([]wAcctSet, 0, len(accts))}
	for _, a := range accts {
		w := wAcctSet{Name: a.Name, Description: a.Description, Organization: a.Organization, Coordinators: []wCoord{}}
		if w.Description == "" {
			w.Description = a.Name
		}
		if w.Organization == "" {
			w.Organization = a.Name
		}
		for _, u := range a.Coordinators {
			if !slices.ContainsFunc(w.Coordinators, func(x wCoord) bool { return x.Name == u }) {
				w.Coordinators = append(w.Coordinators, wCoord{Name: u})
			}
		}
		body.Accounts = append(body.Accounts, w)
	}
	return c.do(ctx, http.MethodPost, c.dbPath("accounts/"), nil, body, nil)
}
