// Package proxy is the fault suite's injector: a small proxy that sits
// between gpubridge and one of its dependencies and breaks the exchange on
// purpose.
//
//   - [HTTP] proxies slurmrestd (or any HTTP/1.1 server). [Rule]s pick
//     requests (by method and path, after k matching requests, n times) and
//     a [Fault] answers them: cut the connection with no answer, forward
//     and then cut (the write happened, the client never learns it), cut the
//     body after k bytes, delay the first byte and throttle the body, answer
//     500, truncate the JSON body, return HTTP 200 with Slurm's errors[],
//     rewrite the advertised data_parser version, or any handler of the
//     test's own.
//   - [TCP] proxies a TCP service byte for byte: cut every connection after
//     k bytes, reset every open connection now, and, for MariaDB, read the
//     client's command packets and reset the connection before a statement
//     that matches is sent, or after it was executed but before its answer
//     reaches the client (between two statements of a transaction, or
//     around COMMIT).
//
// Tests drive both in-process (NewHTTP, NewTCP); cmd/faultproxy runs one
// from a shell. Only test code imports this package.
package proxy
