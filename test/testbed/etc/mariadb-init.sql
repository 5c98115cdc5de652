-- Run by up.sh as MariaDB root (unix socket) after mariadbd starts, before slurmdbd's first start.
-- Users exist for TCP from 127.0.0.1 (mariadbd runs with --skip-name-resolve) and for the socket.
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE DATABASE IF NOT EXISTS gpubridge;
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmpw';
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmpw';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
-- read-only reader of the accounting database (gpubridge ingest)
CREATE USER IF NOT EXISTS 'gpubridge_ro'@'127.0.0.1' IDENTIFIED BY 'gpubridge_ro';
CREATE USER IF NOT EXISTS 'gpubridge_ro'@'localhost' IDENTIFIED BY 'gpubridge_ro';
GRANT SELECT ON slurm_acct_db.* TO 'gpubridge_ro'@'127.0.0.1';
GRANT SELECT ON slurm_acct_db.* TO 'gpubridge_ro'@'localhost';
-- gpubridge's own database, plus scratch databases gpubridge_<anything> for tests
CREATE USER IF NOT EXISTS 'gpubridge'@'127.0.0.1' IDENTIFIED BY 'gpubridge';
CREATE USER IF NOT EXISTS 'gpubridge'@'localhost' IDENTIFIED BY 'gpubridge';
GRANT ALL ON gpubridge.* TO 'gpubridge'@'127.0.0.1';
GRANT ALL ON gpubridge.* TO 'gpubridge'@'localhost';
GRANT ALL ON `gpubridge\_%`.* TO 'gpubridge'@'127.0.0.1';
GRANT ALL ON `gpubridge\_%`.* TO 'gpubridge'@'localhost';
-- benchmarks that write synthetic rows into the accounting database
CREATE USER IF NOT EXISTS 'gpubridge_bench'@'127.0.0.1' IDENTIFIED BY 'gpubridge_bench';
CREATE USER IF NOT EXISTS 'gpubridge_bench'@'localhost' IDENTIFIED BY 'gpubridge_bench';
GRANT ALL ON slurm_acct_db.* TO 'gpubridge_bench'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'gpubridge_bench'@'localhost';
FLUSH PRIVILEGES;
