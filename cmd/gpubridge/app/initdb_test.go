package app

import (
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestLocalDSN(t *testing.T) {
	for dsn, want := range map[string]bool{
		"u:p@unix(/run/mysqld/mysqld.sock)/gpubridge": true,
		"u:p@tcp(127.0.0.1:3306)/gpubridge":           true,
		"u:p@tcp(localhost:3306)/gpubridge":           true,
		"u:p@tcp([::1]:3306)/gpubridge":               true,
		"u:p@tcp(db.example.org:3306)/gpubridge":      false,
		"u:p@tcp(10.0.0.5)/gpubridge":                 false,
	} {
		c, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if got := localDSN(c); got != want {
			t.Errorf("localDSN(%s) = %v, want %v", dsn, got, want)
		}
	}
}
