#!/bin/sh
# Run once by the postgres image on an empty data volume, as the database owner (POSTGRES_USER), who
# runs the migrations. Creates the role the service serves as: it reads and writes rows and nothing
# else (no CREATE, DROP, ALTER or TRUNCATE), so a flaw in the service cannot change the schema.
# Tables and sequences the owner creates later (every migration) are granted by default privileges.
set -eu
: "${SERVICE_DB_PASSWORD:?SERVICE_DB_PASSWORD is not set (compose.env)}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v owner="$POSTGRES_USER" -v db="$POSTGRES_DB" -v service_password="$SERVICE_DB_PASSWORD" <<'SQL'
CREATE ROLE finance_service LOGIN PASSWORD :'service_password';
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"db" TO finance_service;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO finance_service;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO finance_service;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO finance_service;
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO finance_service;
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO finance_service;
SQL
