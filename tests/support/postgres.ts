// A real PostgreSQL for tests: one server per test file (beforeAll/afterAll), a fresh database per
// test (`createDatabase`). The starter is plain JavaScript so `npm run bench` can use it too.
export { startPostgres, type PgServer, type PgServerOptions } from '../../scripts/postgres-server.js';
