// Command faultproxy runs the fault suite's proxy (test/fault/proxy) from a
// shell, in front of slurmrestd or MariaDB, for trying a fault by hand:
//
//	faultproxy -upstream http://127.0.0.1:6820 -listen 127.0.0.1:7820 -fault slow=30s,10240
//	faultproxy -upstream http://127.0.0.1:6820 -match POST:/slurmdb/ -after 3 -fault cut-after-forward
//	faultproxy -tcp -mysql -upstream 127.0.0.1:3306 -listen 127.0.0.1:13306 -reset-before '^COMMIT'
//
// then point gpubridge at it (GPUBRIDGE_SLURMREST_URL=http://127.0.0.1:7820,
// or a DSN with tcp(127.0.0.1:13306)). It runs until interrupted and prints
// what it injected when it stops.
package main
