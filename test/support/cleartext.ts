/** Credentials of a cleartext HTTP/2 test server at `server` (no TLS, no token): for BenchClient. */
export const cleartextCredentials = (server: string) => ({
  server,
  ca: undefined,
  cert: undefined,
  key: undefined,
  token: undefined,
  insecureSkipTlsVerify: false,
  context: 'test',
});
