package internal
import (
 _ "github.com/spf13/cobra"
 _ "github.com/jmoiron/sqlx"
 _ "github.com/go-sql-driver/mysql"
 _ "github.com/robfig/cron/v3"
 _ "github.com/NVIDIA/go-nvml/pkg/nvml"
 _ "github.com/golang-jwt/jwt/v5"
 _ "github.com/pressly/goose/v3"
 _ "github.com/google/go-cmp/cmp"
 _ "github.com/prometheus/client_golang/prometheus"
 _ "github.com/schollz/progressbar/v3"
 _ "sigs.k8s.io/yaml"
)

