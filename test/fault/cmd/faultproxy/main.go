package main

import (
	"context"
	"errors"
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
	o, ok := parseFlags(args)
	if !ok {
		return 2
	}
	if o.upstream == "" {
		return fail("-upstream is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.tcp {
		p, err := tcpProxy(o)
		if err != nil {
			return fail("%v", err)
		}
		fmt.Printf("faultproxy: tcp %s -> %s\n", p.Addr(), o.upstream)
		<-ctx.Done()
		p.Close()
		fmt.Printf("faultproxy: %+v\n", p.Stats())
		return 0
	}
	p, err := httpProxy(o)
	if err != nil {
		return fail("%v", err)
	}
	fmt.Printf("faultproxy: http %s -> %s\n", p.URL(), o.upstream)
	<-ctx.Done()
	p.Close()
	fmt.Printf("faultproxy: %+v\n", p.Stats())
	return 0
}

// fail reports a problem of the command line or of the proxy's start on
// stderr, and returns the exit code 2.
func fail(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "faultproxy: "+format+"\n", a...)
	return 2
}

// options are faultproxy's flags.
type options struct {
	upstream, listen        string
	tcp, mysql              bool
	fault, match            string
	after, times            int
	cutBytes                int64
	resetBefore, resetAfter string
}

// parseFlags reads the flags (false when they are wrong: the flag package
// said why).
func parseFlags(args []string) (options, bool) {
	var o options
	fs := flag.NewFlagSet("faultproxy", flag.ContinueOnError)
	fs.StringVar(&o.upstream, "upstream", "", "the service to proxy: http://host:port (HTTP) or host:port (-tcp)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "listen address")
	fs.BoolVar(&o.tcp, "tcp", false, "proxy TCP byte for byte instead of HTTP")
	fs.BoolVar(&o.mysql, "mysql", false, "with -tcp: read MariaDB command packets (for -reset-before/-reset-after)")
	fs.StringVar(&o.fault, "fault", "", "HTTP fault: cut, cut-after-forward, cut-body=N, slow=D[,BPS], status=CODE, truncate, errors=NUM[:TEXT], data-parser=V")
	fs.StringVar(&o.match, "match", "", "HTTP: METHOD[,METHOD]:PATH-PREFIX the fault applies to (default every request)")
	fs.IntVar(&o.after, "after", 0, "matching requests or statements let through before the fault")
	fs.IntVar(&o.times, "times", 0, "how many are then faulted (0 = all)")
	fs.Int64Var(&o.cutBytes, "cut-bytes", 0, "with -tcp: reset each connection after N bytes from the upstream")
	fs.StringVar(&o.resetBefore, "reset-before", "", "with -tcp -mysql: reset the connection before a statement matching this regexp is sent")
	fs.StringVar(&o.resetAfter, "reset-after", "", "with -tcp -mysql: reset the connection after a matching statement ran, before its answer")
	if err := fs.Parse(args); err != nil {
		return o, false
	}
	return o, true
}

// tcpProxy starts the TCP proxy with its connection cut and its
// statement rules (-reset-before, -reset-after: MariaDB only).
func tcpProxy(o options) (*proxy.TCP, error) {
	p, err := proxy.NewTCPOn(o.listen, o.upstream, o.mysql)
	if err != nil {
		return nil, err
	}
	p.CutAfterBytes(o.cutBytes)
	for _, r := range []struct {
		expr string
		exec bool
	}{{o.resetBefore, false}, {o.resetAfter, true}} {
		if r.expr == "" {
			continue
		}
		if !o.mysql {
			return nil, errors.New("-reset-before and -reset-after need -mysql")
		}
		re, err := regexp.Compile("(?i)" + r.expr)
		if err != nil {
			return nil, fmt.Errorf("statement pattern %q: %v", r.expr, err)
		}
		p.AddStatementRule(&proxy.StatementRule{Match: re.MatchString, AfterExec: r.exec, After: o.after, Times: o.times})
	}
	return p, nil
}

// httpProxy starts the HTTP proxy with its fault, on the requests -match
// names (every request without it).
func httpProxy(o options) (*proxy.HTTP, error) {
	p, err := proxy.NewHTTPOn(o.listen, o.upstream)
	if err != nil || o.fault == "" {
		return p, err
	}
	f, err := proxy.ParseFault(o.fault)
	if err != nil {
		return nil, err
	}
	rule := &proxy.Rule{After: o.after, Times: o.times, Fault: f}
	if o.match != "" {
		methods, prefix, ok := strings.Cut(o.match, ":")
		if !ok {
			return nil, fmt.Errorf("-match %q: want METHOD[,METHOD]:PATH-PREFIX, e.g. GET:/slurmdb/", o.match)
		}
		var ms []string
		if methods != "" && methods != "*" {
			ms = strings.Split(strings.ToUpper(methods), ",")
		}
		rule.Match = proxy.Methods(prefix, ms...)
	}
	p.Add(rule)
	return p, nil
}
