package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"github.com/gpubridge/gpubridge/test/fault/proxy"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("faultproxy", flag.ContinueOnError)
	upstream := fs.String("upstream", "", "the service to proxy: http://host:port (HTTP) or host:port (-tcp)")
	listen := fs.String("listen", "127.0.0.1:0", "listen address")
	tcp := fs.Bool("tcp", false, "proxy TCP byte for byte instead of HTTP")
	mysql := fs.Bool("mysql", false, "with -tcp: read MariaDB command packets (for -reset-before/-reset-after)")
	fault := fs.String("fault", "", "HTTP fault: cut, cut-after-forward, cut-body=N, slow=D[,BPS], status=CODE, truncate, errors=NUM[:TEXT], data-parser=V")
	match := fs.String("match", "", "HTTP: METHOD[,METHOD]:PATH-PREFIX the fault applies to (default every request)")
	after := fs.Int("after", 0, "matching requests or statements let through before the fault")
	times := fs.Int("times", 0, "how many are then faulted (0 = all)")
	cutBytes := fs.Int64("cut-bytes", 0, "with -tcp: reset each connection after N bytes from the upstream")
	before := fs.String("reset-before", "", "with -tcp -mysql: reset the connection before a statement matching this regexp is sent")
	afterExec := fs.String("reset-after", "", "with -tcp -mysql: reset the connection after a matching statement ran, before its answer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "faultproxy: "+format+"\n", a...)
		return 2
	}
	if *upstream == "" {
		return fail("-upstream is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *tcp {
		p, err := proxy.NewTCPOn(*listen, *upstream, *mysql)
		if err != nil {
			return fail("%v", err)
		}
		p.CutAfterBytes(*cutBytes)
		for _, r := range []struct {
			expr string
			exec bool
		}{{*before, false}, {*afterExec, true}} {
			if r.expr == "" {
				continue
			}
			if !*mysql {
				return fail("-reset-before and -reset-after need -mysql")
			}
			re, err := regexp.Compile("(?i)" + r.expr)
			if err != nil {
				return fail("statement pattern %q: %v", r.expr, err)
			}
			p.AddStatementRule(&proxy.StatementRule{Match: re.MatchString, AfterExec: r.exec, After: *after, Times: *times})
		}
		fmt.Printf("faultproxy: tcp %s -> %s\n", p.Addr(), *upstream)
		<-ctx.Done()
		p.Close()
		fmt.Printf("faultproxy: %+v\n", p.Stats())
		return 0
	}
	p, err := proxy.NewHTTPOn(*listen, *upstream)
	if err != nil {
		return fail("%v", err)
	}
	if *fault != "" {
		f, err := proxy.ParseFault(*fault)
		if err != nil {
			return fail("%v", err)
		}
		rule := &proxy.Rule{After: *after, Times: *times, Fault: f}
		if *match != "" {
			methods, prefix, ok := strings.Cut(*match, ":")
			if !ok {
				return fail("-match %q: want METHOD[,METHOD]:PATH-PREFIX, e.g. GET:/slurmdb/", *match)
			}
			var ms []string
			if methods != "" && methods != "*" {
				ms = strings.Split(strings.ToUpper(methods), ",")
			}
			rule.Match = proxy.Methods(prefix, ms...)
		}
		p.Add(rule)
	}
	fmt.Printf("faultproxy: http %s -> %s\n", p.URL(), *upstream)
	<-ctx.Done()
	p.Close()
	fmt.Printf("faultproxy: %+v\n", p.Stats())
	return 0
}
