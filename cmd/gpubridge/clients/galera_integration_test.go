//go:build integration

package clients_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients/clientstest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestGaleraCheckDBNode: the database's readiness probe names the node it
// reached (sqldb.LastStatus, exported as gpubridge_database_node_info and
// _wsrep_local_state) and is not ready, naming node and state, while that
// Galera node is not Synced (desynced by wsrep_desync: Donor/Desynced).
func TestGaleraCheckDBNode(t *testing.T) {
	e, dsns := testbed.RequireGalera(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := fmt.Sprintf("gpubridge_ready%d_%d", os.Getpid()%100000, time.Now().UnixNano()%1000000)
	admin, err := sqldb.Open(ctx, dsns[2])
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatal(err)
	}
	defer admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+name+"`")

	srv := clientstest.NewSlurm("fake", "tok-1")
	defer srv.Close()
	tok := filepath.Join(t.TempDir(), "jwt")
	write(t, tok, "tok-1\n")
	c := testConfig(t, srv, tok)
	cfg, err := mysql.ParseDSN(dsns[2])
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	c.Database.DSN, c.Database.Init = cfg.FormatDSN(), true
	s := clients.New(c, clients.Options{})
	defer s.Close()

	if err := s.CheckDB(ctx); err != nil {
		t.Fatalf("CheckDB on a Synced node: %v", err)
	}
	st, ok := sqldb.LastStatus()
	if !ok || !strings.HasSuffix(st.Node, ":4308") || !st.Galera || st.LocalState != 4 {
		t.Fatalf("LastStatus = %+v, %v; want node 3 (port 4308), Galera, Synced", st, ok)
	}
	t.Logf("probe reached %s, wsrep_local_state %d", st.Node, st.LocalState)

	// wsrep_desync needs SUPER: as root, on node 3's socket (galera.sh).
	desync := func(ctx context.Context, on string) error {
		_, err := e.Run(ctx, "", nil, "mysql", "-S", "/run/mariadbd/galera3.sock", "-uroot", "-e", "SET GLOBAL wsrep_desync = "+on)
		return err
	}
	if err := desync(ctx, "ON"); err != nil {
		t.Fatal(err)
	}
	defer desync(context.Background(), "OFF")
	err = s.CheckDB(ctx)
	if err == nil || !strings.Contains(err.Error(), st.Node) || !strings.Contains(err.Error(), "Donor/Desynced") {
		t.Errorf("CheckDB on a desynced node = %v; want not ready, naming %s and Donor/Desynced", err, st.Node)
	}
	if got, _ := sqldb.LastStatus(); got.LocalState != 2 {
		t.Errorf("LastStatus while desynced = %+v; want wsrep_local_state 2", got)
	}
	if err := desync(ctx, "OFF"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for err = s.CheckDB(ctx); err != nil && time.Now().Before(deadline); err = s.CheckDB(ctx) {
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Errorf("CheckDB once synced again: %v", err)
	}
}
