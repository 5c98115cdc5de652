package slurmrest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Association is a slurmdbd association: an account on a cluster (User
// empty) or a user under an account.
type Association struct {
	ID            int
	Cluster       string
	Account       string
	User          string // empty for the account's own association
	Partition     string
	ParentAccount string
	QOS           []string
	DefaultQOS    string
	IsDefault     bool // the user's default account
	SharesRaw     int
	GrpTRES       []TRES
}

// AssociationFilter selects associations. Empty fields match everything;
// within a field any value matches.
type AssociationFilter struct {
	Clusters   []string
	Accounts   []string
	Users      []string
	Partitions []string
	// Own asks for each association's own settings only: no limits, QOS
	// lists or default QOS inherited from parents (an association that
	// inherits them reads as having none; slurmrestd's flag "Exclude
	// limits from parents"). The parent account's name is still read
	// (reconcile finds sub-accounts under a tenant by it, issue 25);
	// excluding it too ("Exclude parent id/name") saved slurmdbd about a
	// fifth of its time for a whole cluster's associations. Ignored by
	// DeleteAssociations.
	Own bool
}

func (f AssociationFilter) empty() bool {
	return len(f.Clusters)+len(f.Accounts)+len(f.Users)+len(f.Partitions) == 0
}

func (f AssociationFilter) query() url.Values {
	q := url.Values{}
	add := func(k string, v []string) {
		if len(v) > 0 {
			q.Set(k, strings.Join(v, ","))
		}
	}
	add("cluster", f.Clusters)
	add("account", f.Accounts)
	add("user", f.Users)
	add("partition", f.Partitions)
	return q
}

// listQuery is query with the read-only flags.
func (f AssociationFilter) listQuery() url.Values {
	q := f.query()
	if f.Own {
		q.Set("Exclude limits from parents", "true")
	}
	return q
}

// AssociationSpec sets a user association (or an account's own one when
// User is empty) on the client's cluster.
type AssociationSpec struct {
	Account    string
	User       string
	Partition  string
	QOS        []string // the QOS the association may use; nil leaves them
	DefaultQOS string   // must be one of QOS; empty leaves it
}

type wAssoc struct {
	ID        int      `json:"id,omitempty"`
	Cluster   string   `json:"cluster"`
	Account   string   `json:"account"`
	User      string   `json:"user"`
	Partition string   `json:"partition,omitempty"`
	Parent    string   `json:"parent_account,omitempty"`
	QOS       []string `json:"qos,omitempty"`
	Default   *struct {
		QOS string `json:"qos,omitempty"`
	} `json:"default,omitempty"`
	IsDefault bool `json:"is_default,omitempty"`
	SharesRaw int  `json:"shares_raw,omitempty"`
	Max       *struct {
		TRES struct {
			Total []wTRES `json:"total"`
		} `json:"tres"`
	} `json:"max,omitempty"`
}

type assocsResp struct {
	envelope
	Associations []wAssoc `json:"associations"`
}

// ListAssociations returns the associations that match f
// (GET /slurmdb/{v}/associations/).
func (c *Client) ListAssociations(ctx context.Context, f AssociationFilter) ([]Association, error) {
	var resp assocsResp
	if err := c.do(ctx, http.MethodGet, c.dbPath("associations/"), f.listQuery(), nil, &resp); err != nil {
		return nil, fmt.Errorf("list associations: %w", err)
	}
	out := make([]Association, 0, len(resp.Associations))
	for _, w := range resp.Associations {
		a := Association{
			ID: w.ID, Cluster: w.Cluster, Account: w.Account, User: w.User, Partition: w.Partition,
			ParentAccount: w.Parent, QOS: w.QOS, IsDefault: w.IsDefault, SharesRaw: w.SharesRaw,
		}
		if w.Default != nil {
			a.DefaultQOS = w.Default.QOS
		}
		if w.Max != nil {
			a.GrpTRES = fromWireTRES(w.Max.TRES.Total)
		}
		out = append(out, a)
	}
	return out, nil
}

// SetAssociations creates or modifies associations in one request
// (POST /slurmdb/{v}/associations/). Slurm silently creates nothing for a
// user association whose account has no association on the cluster, so
// this first checks (one read) and fails with ErrNoClusterAssociation,
// writing nothing. The request is all or nothing (*BulkError).
func (c *Client) SetAssociations(ctx context.Context, specs []AssociationSpec) error {
	return c.SetAssociationsKnown(ctx, specs, nil)
}

// SetAssociationsKnown is SetAssociations for a caller that knows which
// accounts have their cluster association (clustered reports it: read
// from the cluster before, or just created): its check reads only the
// accounts clustered does not vouch for, and none when it vouches for all.
// A nil clustered vouches for none.
func (c *Client) SetAssociationsKnown(ctx context.Context, specs []AssociationSpec, clustered func(account string) bool) error {
	if len(specs) == 0 {
		return nil
	}
	var userAccounts []string
	seenAcct := map[string]bool{}
	for _, s := range specs {
		if s.Account == "" {
			return fmt.Errorf("set associations: %w: an association has no account", ErrInvalid)
		}
		if s.DefaultQOS != "" && s.QOS != nil && !slices.Contains(s.QOS, s.DefaultQOS) {
			return fmt.Errorf("set association %s: %w: default QOS %q is not in its QOS list %v", s.label(), ErrInvalid, s.DefaultQOS, s.QOS)
		}
		if s.User != "" && !seenAcct[s.Account] {
			seenAcct[s.Account] = true
			if clustered == nil || !clustered(s.Account) {
				userAccounts = append(userAccounts, s.Account)
			}
		}
	}
	if len(userAccounts) > 0 {
		have, err := c.ListAssociations(ctx, AssociationFilter{Clusters: []string{c.clusterFor(ctx)}, Accounts: userAccounts, Own: true})
		if err != nil {
			return fmt.Errorf("set associations: check accounts: %w", err)
		}
		ok := map[string]bool{}
		for _, h := range have {
			if h.User == "" && h.Cluster == c.clusterFor(ctx) {
				ok[h.Account] = true
			}
		}
		var missing []string
		for _, a := range userAccounts {
			if !ok[a] {
				missing = append(missing, a)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("set associations: account(s) %s on cluster %s: %w (create the account with CreateAccounts first); nothing was written",
				listNames(missing, bulkShownNames), c.clusterFor(ctx), ErrNoClusterAssociation)
		}
	}
	return chunked(ctx, c, "set associations", specs, c.postAssociations, c.associationsLeft)
}

// postAssociations sends one request of associations.
func (c *Client) postAssociations(ctx context.Context, specs []AssociationSpec) error {
	var body struct {
		Associations []wAssoc `json:"associations"`
	}
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		w := wAssoc{Cluster: c.clusterFor(ctx), Account: s.Account, User: s.User, Partition: s.Partition, QOS: s.QOS}
		if s.DefaultQOS != "" {
			w.Default = &struct {
				QOS string `json:"qos,omitempty"`
			}{s.DefaultQOS}
		}
		body.Associations = append(body.Associations, w)
		names = append(names, s.name())
	}
	if err := c.do(ctx, http.MethodPost, c.dbPath("associations/"), nil, body, nil); err != nil {
		return bulkError("set associations", names, err)
	}
	return nil
}

// associationsLeft returns the specs Slurm does not hold as asked: the
// association missing, or with another QOS list or default QOS.
func (c *Client) associationsLeft(ctx context.Context, specs []AssociationSpec) ([]AssociationSpec, error) {
	var accts []string
	for _, s := range specs {
		if !slices.Contains(accts, s.Account) {
			accts = append(accts, s.Account)
		}
	}
	have, err := c.ListAssociations(ctx, AssociationFilter{Clusters: []string{c.clusterFor(ctx)}, Accounts: accts, Own: true})
	if err != nil {
		return nil, err
	}
	type key struct{ account, user, partition string }
	byKey := make(map[key]Association, len(have))
	for _, a := range have {
		byKey[key{a.Account, a.User, a.Partition}] = a
	}
	var out []AssociationSpec
	for _, s := range specs {
		a, ok := byKey[key{s.Account, s.User, s.Partition}]
		if !ok || s.QOS != nil && !sameSet(a.QOS, s.QOS) || s.DefaultQOS != "" && a.DefaultQOS != s.DefaultQOS {
			out = append(out, s)
		}
	}
	return out, nil
}

// sameSet reports whether a and b hold the same names, in any order.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

// name is how Slurm's messages name the association: its user, or its
// account for an account's own association.
func (s AssociationSpec) name() string {
	if s.User != "" {
		return s.User
	}
	return s.Account
}

func (s AssociationSpec) label() string {
	l := "account=" + s.Account
	if s.User != "" {
		l += " user=" + s.User
	}
	if s.Partition != "" {
		l += " partition=" + s.Partition
	}
	return l
}

// DeleteAssociations deletes the associations that match f
// (DELETE /slurmdb/{v}/associations/) and returns what Slurm removed. An
// empty filter is refused: it would delete every association.
func (c *Client) DeleteAssociations(ctx context.Context, f AssociationFilter) ([]string, error) {
	if f.empty() || len(f.Accounts)+len(f.Users) == 0 {
		return nil, fmt.Errorf("delete associations: %w: name accounts or users (an open filter would delete every association)", ErrInvalid)
	}
	var resp struct {
		envelope
		Removed []string `json:"removed_associations"`
	}
	if err := c.do(ctx, http.MethodDelete, c.dbPath("associations/"), f.query(), nil, &resp); err != nil {
		return nil, fmt.Errorf("delete associations: %w", err)
	}
	return resp.Removed, nil
}
