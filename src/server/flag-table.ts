/**
 * The flags of `capstan server`: kube-apiserver's names, types and defaults (so Capstan drops in
 * where kube-apiserver is started: envtest, kwok, kubeadm-style manifests), plus Capstan's own
 * `--data-dir`. Flags whose feature arrives in a later version are accepted and stored
 * (`notImplemented`), and `--help` says so.
 */
import type { FlagSpec } from '../flags/flags.js';

const SERVING = 'Secure serving';
const ETCD = 'Etcd';
const GENERIC = 'Generic';
const AUTHN = 'Authentication';
const AUTHZ = 'Authorization';
const AUDIT = 'Auditing';
const API = 'API enablement';
const ADMISSION = 'Admission';
const MISC = 'Misc';
const LOGS = 'Logs';
const METRICS = 'Metrics';
const CAPSTAN = 'Capstan';

const later = { notImplemented: true } as const;

/** Every flag of `capstan server`, in help order (one flag per line: a table, not code). */
// prettier-ignore
/**
 * kubeadm's `--kubelet-preferred-address-types` (InternalIP first), which `capstan cluster` and
 * the test harness set: their nodes register under names that need not resolve.
 */
export const KUBEADM_ADDRESS_TYPES = 'InternalIP,ExternalIP,Hostname';

export const SERVER_FLAGS: readonly FlagSpec[] = [
  // Secure serving
  {
    section: SERVING,
    name: 'secure-port',
    type: 'int',
    default: 6443,
    usage:
      'Port of the HTTPS listener, which authenticates and authorizes every request. 0 picks a free port (Capstan extension).',
  },
  {
    section: SERVING,
    name: 'bind-address',
    type: 'string',
    default: '0.0.0.0',
    usage: 'Address the --secure-port listener binds to. 0.0.0.0 or :: (or blank) mean all interfaces.',
  },
  {
    section: SERVING,
    name: 'cert-dir',
    type: 'string',
    default: '/var/run/capstan',
    usage:
      'Directory holding the TLS certificates. An apiserver.crt/apiserver.key pair found there that Capstan did not issue is served as it is; a missing pair is generated (with a CA). When --tls-cert-file and --tls-private-key-file are set, the directory is used only for the CA and the admin client certificate.',
  },
  {
    section: SERVING,
    name: 'tls-cert-file',
    type: 'string',
    default: '',
    usage:
      'Default x509 serving certificate for HTTPS, with the CA certificate, if any, appended after it. Unset: a CA and a serving certificate are generated in --cert-dir.',
  },
  {
    section: SERVING,
    name: 'tls-private-key-file',
    type: 'string',
    default: '',
    usage: 'Default x509 private key, the one that goes with --tls-cert-file.',
  },
  {
    section: SERVING,
    name: 'tls-min-version',
    type: 'string',
    default: '',
    usage: 'Lowest TLS version accepted: VersionTLS10, VersionTLS11, VersionTLS12 or VersionTLS13.',
  },
  {
    section: SERVING,
    name: 'tls-cipher-suites',
    type: 'stringSlice',
    default: [],
    usage: 'Cipher suites the server allows, comma separated.',
  },
  {
    section: SERVING,
    name: 'tls-sni-cert-key',
    type: 'stringArray',
    default: [],
    usage:
      'Paths of an x509 certificate and its private key, optionally followed by the domain patterns they serve.',
  },
  {
    section: SERVING,
    name: 'http2-max-streams-per-connection',
    type: 'int',
    default: 0,
    usage:
      'Highest number of concurrent streams per HTTP/2 connection that the server announces to clients. 0 keeps the library default.',
  },

  // Etcd
  {
    section: ETCD,
    name: 'etcd-servers',
    type: 'stringSlice',
    default: [],
    usage:
      'etcd endpoints to use (scheme://ip:port), comma separated. Without it, Capstan uses its embedded store under --data-dir.',
  },
  {
    section: ETCD,
    name: 'etcd-cafile',
    type: 'string',
    default: '',
    usage: 'Certificate authority file for TLS connections to etcd.',
  },
  {
    section: ETCD,
    name: 'etcd-certfile',
    type: 'string',
    default: '',
    usage: 'Client certificate file for TLS connections to etcd.',
  },
  {
    section: ETCD,
    name: 'etcd-keyfile',
    type: 'string',
    default: '',
    usage: 'Client key file for TLS connections to etcd.',
  },
  {
    section: ETCD,
    name: 'etcd-prefix',
    type: 'string',
    default: '/registry',
    usage: 'Prefix put in front of every resource key in etcd (and in the embedded store).',
  },
  {
    section: ETCD,
    name: 'etcd-compaction-interval',
    type: 'duration',
    default: 300_000,
    usage: 'The interval between compaction requests sent to etcd. 0 turns these requests off.',
  },
  {
    section: ETCD,
    name: 'etcd-healthcheck-timeout',
    type: 'duration',
    default: 2_000,
    usage: 'How long an etcd health check may take.',
  },
  {
    section: ETCD,
    name: 'etcd-readycheck-timeout',
    type: 'duration',
    default: 2_000,
    usage: 'How long an etcd readiness check may take.',
  },
  {
    section: ETCD,
    name: 'storage-backend',
    type: 'string',
    default: 'etcd3',
    usage:
      "Backend that persists objects. Accepted: 'etcd3' (the default: etcd with --etcd-servers, else the embedded store in --data-dir) and Capstan's own 'memory' (nothing persists; for tests and envtest).",
  },
  {
    section: ETCD,
    name: 'storage-media-type',
    type: 'string',
    default: 'application/vnd.kubernetes.protobuf',
    usage:
      'Media type objects are stored in. Some resources or backends only handle one media type and ignore this setting. Accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf.',
  },
  {
    section: ETCD,
    name: 'watch-cache',
    type: 'bool',
    default: true,
    usage: 'Turns the watch cache on or off.',
  },
  {
    section: ETCD,
    name: 'default-watch-cache-size',
    type: 'int',
    default: 100,
    usage:
      'Watch cache size for resources without a size of their own. 0 turns the watch cache off for those resources.',
  },
  {
    section: ETCD,
    name: 'watch-cache-sizes',
    type: 'stringSlice',
    default: [],
    usage: 'Per-resource watch cache sizes (pods, nodes, etc.), comma separated: resource[.group]#size.',
  },
  {
    section: ETCD,
    name: 'delete-collection-workers',
    type: 'int',
    default: 1,
    usage: 'How many workers a DeleteCollection call starts.',
    ...later,
  },
  {
    section: ETCD,
    name: 'encryption-provider-config',
    type: 'string',
    default: '',
    usage:
      'File saying how secrets are encrypted before they are written to etcd (EncryptionConfiguration apiserver.config.k8s.io/v1: identity, aescbc, aesgcm, secretbox; the first provider encrypts, all decrypt).',
  },
  {
    section: ETCD,
    name: 'etcd-servers-overrides',
    type: 'stringSlice',
    default: [],
    usage: 'etcd servers for particular resources, comma separated: group/resource#servers.',
    ...later,
  },

  // Generic
  {
    section: GENERIC,
    name: 'advertise-address',
    type: 'string',
    default: '',
    usage:
      "IP address the server announces to the rest of the cluster. Added to the generated serving certificate; the kubernetes Service's Endpoints and EndpointSlice carry it (unset: the bind address, else the first non-loopback address).",
  },
  {
    section: GENERIC,
    name: 'external-hostname',
    type: 'string',
    default: '',
    usage: 'Hostname used when building external URLs for this server.',
    ...later,
  },
  {
    section: GENERIC,
    name: 'event-ttl',
    type: 'duration',
    default: 3_600_000,
    usage:
      "How long events are kept: each Event is written with a storage lease of this length (kube-apiserver's event TTL), so the store removes it when the lease expires.",
  },
  {
    section: GENERIC,
    name: 'request-timeout',
    type: 'duration',
    default: 60_000,
    usage:
      'How long a request that is not long-running (watches, exec, logs, proxy are) may take: one still unanswered then gets 504 Timeout. A shorter ?timeout= on the request wins. Also the shutdown grace for requests in flight.',
  },
  {
    section: GENERIC,
    name: 'min-request-timeout',
    type: 'int',
    default: 1800,
    usage:
      'Shortest time, in seconds, a handler keeps a request open before it may time out: a watch without ?timeoutSeconds= ends after a random time between this and twice this.',
  },
  {
    section: GENERIC,
    name: 'max-requests-inflight',
    type: 'int',
    default: 400,
    usage:
      "With --enable-priority-and-fairness=true, added to --max-mutating-requests-inflight to give the server's total concurrency limit (the sum must be positive). Otherwise, the most read-only requests served at once (429 beyond it); 0 removes the limit. Long-running requests and system:masters are not limited.",
  },
  {
    section: GENERIC,
    name: 'max-mutating-requests-inflight',
    type: 'int',
    default: 200,
    usage:
      "With --enable-priority-and-fairness=true, added to --max-requests-inflight to give the server's total concurrency limit (the sum must be positive). Otherwise, the most mutating requests served at once (429 beyond it); 0 removes the limit.",
  },
  {
    section: GENERIC,
    name: 'enable-priority-and-fairness',
    type: 'bool',
    default: true,
    usage:
      'If true, requests are queued and dispatched by priority and fairness instead of the plain max-in-flight limits (the FlowSchemas and PriorityLevelConfigurations of flowcontrol.apiserver.k8s.io/v1; the two max-in-flight limits add up to the server concurrency limit). Requests take one seat each; watches take none.',
  },
  {
    section: GENERIC,
    name: 'goaway-chance',
    type: 'float',
    default: 0,
    usage:
      'Probability of closing a connection with an HTTP/2 GOAWAY, so that HTTP/2 clients do not stay pinned to one server. Long-running requests (watches) are never picked. From 0 (off) to 0.02 (1 request in 50); .001 (1 in 1000) is a reasonable value to start with.',
  },
  {
    section: GENERIC,
    name: 'livez-grace-period',
    type: 'duration',
    default: 0,
    usage:
      'Longest time the server may need to finish starting up and become live. From the start until this has elapsed, /livez reports unfinished post-start hooks as ok.',
  },
  {
    section: GENERIC,
    name: 'shutdown-delay-duration',
    type: 'duration',
    default: 0,
    usage:
      'How long termination is put off: /readyz fails at once, while the server keeps serving for this long.',
  },
  {
    section: GENERIC,
    name: 'shutdown-send-retry-after',
    type: 'bool',
    default: false,
    usage:
      'If true, after --shutdown-delay-duration the listener stays open until the requests in flight (not long-running) are answered; requests arriving meanwhile get 429 with Retry-After: 5 and their connection is closed, instead of a refused connection.',
  },
  {
    section: GENERIC,
    name: 'shutdown-watch-termination-grace-period',
    type: 'duration',
    default: 0,
    usage:
      'Time given to open watches to end during a graceful shutdown: when set, watches are ended (cleanly) at max(count / period, 200) per second instead of all at once, and the shutdown waits for them.',
  },
  {
    section: GENERIC,
    name: 'cors-allowed-origins',
    type: 'stringSlice',
    default: [],
    usage: 'Origins allowed for CORS, comma separated. Empty: CORS is off.',
  },
  {
    section: GENERIC,
    name: 'strict-transport-security-directives',
    type: 'stringSlice',
    default: [],
    usage: 'HSTS directives, comma separated. Empty: no HSTS header.',
  },
  {
    section: GENERIC,
    name: 'max-connection-bytes-per-sec',
    type: 'int',
    default: 0,
    usage:
      'When not 0, caps each user connection at this many bytes per second. Only long-running requests are capped for now (the watches of one connection share the budget).',
  },

  // Authentication
  {
    section: AUTHN,
    name: 'anonymous-auth',
    type: 'bool',
    default: true,
    usage:
      'Allows anonymous requests: a request that no other authentication method rejects is treated as system:anonymous in group system:unauthenticated. As in kube-apiserver, it is turned off (with a warning) when --authorization-mode includes AlwaysAllow.',
  },
  {
    section: AUTHN,
    name: 'client-ca-file',
    type: 'string',
    default: '',
    usage:
      "CA bundle for client certificates: a request whose client certificate is signed by one of these authorities is authenticated as the certificate's CommonName. Capstan also trusts the CA in --cert-dir.",
  },
  {
    section: AUTHN,
    name: 'token-auth-file',
    type: 'string',
    default: '',
    usage: 'If set, a file of static bearer tokens that authenticate requests on the secure port.',
  },
  {
    section: AUTHN,
    name: 'enable-bootstrap-token-auth',
    type: 'bool',
    default: false,
    usage:
      "Lets bootstrap token Secrets (type 'bootstrap.kubernetes.io/token') in the 'kube-system' namespace authenticate clients for TLS bootstrapping.",
  },
  {
    section: AUTHN,
    name: 'service-account-key-file',
    type: 'stringArray',
    default: [],
    usage:
      'PEM file of x509 RSA or ECDSA keys, private or public, that verify ServiceAccount tokens. Can be repeated. If neither this nor --service-account-signing-key-file is given, a key kept in --cert-dir (sa.key) signs and verifies.',
  },
  {
    section: AUTHN,
    name: 'service-account-signing-key-file',
    type: 'string',
    default: '',
    usage:
      'Private key the service account token issuer currently signs with. Without it, a private key in --service-account-key-file signs (Capstan extension), else the key in --cert-dir.',
  },
  {
    section: AUTHN,
    name: 'service-account-issuer',
    type: 'stringArray',
    default: [],
    usage:
      'Issuer of ServiceAccount tokens. Can be repeated; the first is used to issue, all are accepted. Default https://kubernetes.default.svc.cluster.local (Capstan; kube-apiserver requires the flag).',
  },
  {
    section: AUTHN,
    name: 'service-account-jwks-uri',
    type: 'string',
    default: '',
    usage:
      'JSON Web Key Set URI to put in the discovery document at /.well-known/openid-configuration, instead of the default. Must be https.',
  },
  {
    section: AUTHN,
    name: 'service-account-lookup',
    type: 'bool',
    default: true,
    usage: 'If true, authentication checks that a ServiceAccount token still exists in etcd.',
  },
  {
    section: AUTHN,
    name: 'service-account-max-token-expiration',
    type: 'duration',
    default: 0,
    usage:
      'Longest validity the service account token issuer gives a token. 0 means no limit; otherwise between 1h and 2^32 seconds.',
  },
  {
    section: AUTHN,
    name: 'service-account-extend-token-expiration',
    type: 'bool',
    default: true,
    usage:
      'Extends the lifetime of projected service account tokens when they are issued: pod-bound tokens for the API audiences asking 3607s are valid for a year and warn after 3607s.',
  },
  {
    section: AUTHN,
    name: 'api-audiences',
    type: 'stringSlice',
    default: [],
    usage:
      'Audiences that identify this API: a service account token used against it must have one of them among its audiences. Default: the --service-account-issuer values.',
  },
  {
    section: AUTHN,
    name: 'oidc-issuer-url',
    type: 'string',
    default: '',
    usage: 'OpenID issuer URL; it must use https.',
  },
  {
    section: AUTHN,
    name: 'oidc-client-id',
    type: 'string',
    default: '',
    usage: 'OpenID Connect client ID; required when oidc-issuer-url is set.',
  },
  {
    section: AUTHN,
    name: 'oidc-username-claim',
    type: 'string',
    default: 'sub',
    usage: 'OpenID claim that holds the user name.',
  },
  {
    section: AUTHN,
    name: 'oidc-username-prefix',
    type: 'string',
    default: '',
    usage: "Prefix added to every user name; '-' turns prefixing off.",
  },
  {
    section: AUTHN,
    name: 'oidc-groups-claim',
    type: 'string',
    default: '',
    usage: "Custom OpenID Connect claim that holds the user's groups.",
  },
  {
    section: AUTHN,
    name: 'oidc-groups-prefix',
    type: 'string',
    default: '',
    usage: 'Prefix added to every group name.',
  },
  {
    section: AUTHN,
    name: 'oidc-required-claim',
    type: 'mapStringString',
    default: {},
    usage: 'Claim the ID token must carry, as key=value. Repeat the flag for several claims.',
  },
  {
    section: AUTHN,
    name: 'oidc-ca-file',
    type: 'string',
    default: '',
    usage: "CA bundle that the OpenID server's certificate must be signed by.",
  },
  {
    section: AUTHN,
    name: 'oidc-signing-algs',
    type: 'stringSlice',
    default: ['RS256'],
    usage: 'JOSE asymmetric signing algorithms accepted, comma separated.',
  },
  {
    section: AUTHN,
    name: 'authentication-token-webhook-config-file',
    type: 'string',
    default: '',
    usage: 'Kubeconfig-format file configuring the webhook for token authentication.',
  },
  {
    section: AUTHN,
    name: 'authentication-token-webhook-cache-ttl',
    type: 'duration',
    default: 120_000,
    usage: 'How long answers of the token authentication webhook are cached.',
  },
  {
    section: AUTHN,
    name: 'authentication-token-webhook-version',
    type: 'string',
    default: 'v1beta1',
    usage: 'Version of authentication.k8s.io TokenReview exchanged with the webhook.',
  },
  {
    section: AUTHN,
    name: 'authentication-config',
    type: 'string',
    default: '',
    usage: 'AuthenticationConfiguration file that configures JWT token authenticators.',
    ...later,
  },
  {
    section: AUTHN,
    name: 'requestheader-client-ca-file',
    type: 'string',
    default: '',
    usage:
      'CA bundle that must have signed the client certificate of a request before the user names in the --requestheader-username-headers headers are believed.',
  },
  {
    section: AUTHN,
    name: 'requestheader-allowed-names',
    type: 'stringSlice',
    default: [],
    usage:
      'Client certificate common names allowed to pass user names in headers. Empty: any client certificate signed by the --requestheader-client-ca-file authorities may.',
  },
  {
    section: AUTHN,
    name: 'requestheader-username-headers',
    type: 'stringSlice',
    default: [],
    usage: 'Request headers that carry the user name. X-Remote-User is common.',
  },
  {
    section: AUTHN,
    name: 'requestheader-uid-headers',
    type: 'stringSlice',
    default: [],
    usage: 'Request headers that carry the user UID.',
  },
  {
    section: AUTHN,
    name: 'requestheader-group-headers',
    type: 'stringSlice',
    default: [],
    usage: 'Request headers that carry the groups. X-Remote-Group is suggested.',
  },
  {
    section: AUTHN,
    name: 'requestheader-extra-headers-prefix',
    type: 'stringSlice',
    default: [],
    usage: 'Prefixes of request headers that carry extra user information. X-Remote-Extra- is suggested.',
  },

  // Authorization
  {
    section: AUTHZ,
    name: 'authorization-mode',
    type: 'stringSlice',
    default: ['AlwaysAllow'],
    usage:
      'Authorizers to consult on the secure port, in order: AlwaysAllow, AlwaysDeny, ABAC, Webhook, RBAC, Node.',
  },
  {
    section: AUTHZ,
    name: 'authorization-policy-file',
    type: 'string',
    default: '',
    usage: 'ABAC policy file, one JSON object per line, for --authorization-mode=ABAC.',
  },
  {
    section: AUTHZ,
    name: 'authorization-webhook-config-file',
    type: 'string',
    default: '',
    usage: 'Kubeconfig-format file configuring the webhook for --authorization-mode=Webhook.',
  },
  {
    section: AUTHZ,
    name: 'authorization-webhook-cache-authorized-ttl',
    type: 'duration',
    default: 300_000,
    usage: "How long the webhook authorizer's 'authorized' answers are cached.",
  },
  {
    section: AUTHZ,
    name: 'authorization-webhook-cache-unauthorized-ttl',
    type: 'duration',
    default: 30_000,
    usage: "How long the webhook authorizer's 'unauthorized' answers are cached.",
  },
  {
    section: AUTHZ,
    name: 'authorization-webhook-version',
    type: 'string',
    default: 'v1beta1',
    usage: 'Version of authorization.k8s.io SubjectAccessReview exchanged with the webhook.',
  },
  {
    section: AUTHZ,
    name: 'authorization-config',
    type: 'string',
    default: '',
    usage:
      'AuthorizationConfiguration file that sets up the chain of authorizers (apiserver.config.k8s.io/v1, v1beta1 or v1alpha1: authorizers of type Node, RBAC, Webhook, ABAC, AlwaysAllow, AlwaysDeny). Reloaded when the file changes. Webhook matchConditions (CEL) are not supported yet: a file that sets them is refused. Cannot be used with --authorization-mode or --authorization-webhook-*.',
  },

  // Auditing
  {
    section: AUDIT,
    name: 'audit-policy-file',
    type: 'string',
    default: '',
    usage: 'Audit policy file (audit.k8s.io/v1 Policy). Without it nothing is audited.',
  },
  {
    section: AUDIT,
    name: 'audit-log-path',
    type: 'string',
    default: '',
    usage: "File that every request is audited to, when set. '-' means standard output.",
  },
  {
    section: AUDIT,
    name: 'audit-log-format',
    type: 'string',
    default: 'json',
    usage:
      'Format of the audit log: "legacy" writes one line of text per event, "json" writes structured JSON. Accepted: legacy, json.',
  },
  {
    section: AUDIT,
    name: 'audit-log-maxage',
    type: 'int',
    default: 0,
    usage: 'Days an old audit log file is kept, counted from the timestamp in its name.',
  },
  {
    section: AUDIT,
    name: 'audit-log-maxbackup',
    type: 'int',
    default: 0,
    usage: 'How many old audit log files are kept. 0 keeps them all.',
  },
  {
    section: AUDIT,
    name: 'audit-log-maxsize',
    type: 'int',
    default: 0,
    usage:
      "Size in megabytes an audit log file may reach before it is rotated (0: 100, lumberjack's default, as kube-apiserver 1.33).",
  },
  {
    section: AUDIT,
    name: 'audit-log-compress',
    type: 'bool',
    default: false,
    usage: 'If set, rotated audit log files are gzipped.',
  },
  {
    section: AUDIT,
    name: 'audit-log-mode',
    type: 'string',
    default: 'blocking',
    usage:
      'How audit events are sent: blocking makes server responses wait for the write; batch buffers events and writes them in the background. Accepted: batch, blocking, blocking-strict.',
  },
  {
    section: AUDIT,
    name: 'audit-log-batch-buffer-size',
    type: 'int',
    default: 10000,
    usage: 'How many events are buffered before they are batched and written. Batch mode only.',
  },
  {
    section: AUDIT,
    name: 'audit-log-batch-max-size',
    type: 'int',
    default: 1,
    usage: 'Most events in one batch. Batch mode only.',
  },
  {
    section: AUDIT,
    name: 'audit-log-batch-max-wait',
    type: 'duration',
    default: 0,
    usage: 'How long a batch that is not full waits before it is written anyway. Batch mode only.',
  },
  {
    section: AUDIT,
    name: 'audit-log-batch-throttle-enable',
    type: 'bool',
    default: false,
    usage: 'Whether batch writes are throttled. Batch mode only.',
  },
  {
    section: AUDIT,
    name: 'audit-log-batch-throttle-qps',
    type: 'float',
    default: 0,
    usage: 'Upper limit on the average batches per second. Batch mode only.',
  },
  {
    section: AUDIT,
    name: 'audit-log-batch-throttle-burst',
    type: 'int',
    default: 0,
    usage: 'Most requests sent at once when the throttle QPS has not been used up before. Batch mode only.',
  },
  {
    section: AUDIT,
    name: 'audit-log-truncate-enabled',
    type: 'bool',
    default: false,
    usage: 'Whether events and batches are truncated.',
  },
  {
    section: AUDIT,
    name: 'audit-log-truncate-max-batch-size',
    type: 'int',
    default: 10485760,
    usage:
      'Largest batch passed to the backend; the serialized batch may be a few hundred bytes larger. A bigger batch is split into smaller ones.',
  },
  {
    section: AUDIT,
    name: 'audit-log-truncate-max-event-size',
    type: 'int',
    default: 102400,
    usage:
      'Largest audit event passed to the backend. A bigger event first loses its request and response objects; if it is still too big, it is dropped.',
  },
  {
    section: AUDIT,
    name: 'audit-log-version',
    type: 'string',
    default: 'audit.k8s.io/v1',
    usage: 'Group and version that audit events written to the log are serialized as.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-config-file',
    type: 'string',
    default: '',
    usage: 'Kubeconfig-format file configuring the audit webhook.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-initial-backoff',
    type: 'duration',
    default: 10_000,
    usage: 'Wait before the first retry of a failed request.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-batch-initial-backoff',
    type: 'duration',
    default: 10_000,
    usage:
      'Wait before the first retry of a failed request. Deprecated: use --audit-webhook-initial-backoff.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-mode',
    type: 'string',
    default: 'batch',
    usage:
      'How audit events are sent: blocking makes server responses wait for the send; batch buffers events and sends them in the background. Accepted: batch, blocking, blocking-strict.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-batch-buffer-size',
    type: 'int',
    default: 10000,
    usage: 'How many events are buffered before they are batched and sent. Batch mode only.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-batch-max-size',
    type: 'int',
    default: 400,
    usage: 'Most events in one batch. Batch mode only.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-batch-max-wait',
    type: 'duration',
    default: 30_000,
    usage: 'How long a batch that is not full waits before it is sent anyway. Batch mode only.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-batch-throttle-enable',
    type: 'bool',
    default: true,
    usage: 'Whether batch sends are throttled. Batch mode only.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-batch-throttle-qps',
    type: 'float',
    default: 10,
    usage: 'Upper limit on the average batches per second. Batch mode only.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-batch-throttle-burst',
    type: 'int',
    default: 15,
    usage: 'Most requests sent at once when the throttle QPS has not been used up before. Batch mode only.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-truncate-enabled',
    type: 'bool',
    default: false,
    usage: 'Whether events and batches are truncated.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-truncate-max-batch-size',
    type: 'int',
    default: 10485760,
    usage:
      'Largest batch passed to the backend; the serialized batch may be a few hundred bytes larger. A bigger batch is split into smaller ones.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-truncate-max-event-size',
    type: 'int',
    default: 102400,
    usage:
      'Largest audit event passed to the backend. A bigger event first loses its request and response objects; if it is still too big, it is dropped.',
  },
  {
    section: AUDIT,
    name: 'audit-webhook-version',
    type: 'string',
    default: 'audit.k8s.io/v1',
    usage: 'Group and version that audit events sent to the webhook are serialized as.',
  },

  // API enablement
  {
    section: API,
    name: 'runtime-config',
    type: 'mapStringString',
    default: {},
    usage:
      "key=value pairs that turn built-in APIs on or off: v1=true|false for the core group, <group>/<version>=true|false, <group>/<version>/<resource>=true|false, api/all, api/ga, api/beta, api/alpha (=true|false). A disabled version or resource is not served (no routes, discovery or OpenAPI). Default: kube 1.33's set (GA versions on; every version Capstan serves is GA).",
  },

  // Admission
  {
    section: ADMISSION,
    name: 'enable-admission-plugins',
    type: 'stringSlice',
    default: [],
    usage:
      'Admission plugins to turn on besides the ones on by default (NamespaceLifecycle, LimitRanger, ServiceAccount, TaintNodesByCondition, PodSecurity, Priority, DefaultTolerationSeconds, DefaultStorageClass, StorageObjectInUseProtection, PersistentVolumeClaimResize, RuntimeClass, CertificateApproval, CertificateSigning, ClusterTrustBundleAttest, CertificateSubjectRestriction, DefaultIngressClass, PodTopologyLabels, MutatingAdmissionPolicy, MutatingAdmissionWebhook, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook, ResourceQuota). Known plugins, comma separated: AlwaysAdmit, AlwaysDeny, AlwaysPullImages, CertificateApproval, CertificateSigning, CertificateSubjectRestriction, ClusterTrustBundleAttest, DefaultIngressClass, DefaultStorageClass, DefaultTolerationSeconds, DenyServiceExternalIPs, EventRateLimit, ExtendedResourceToleration, ImagePolicyWebhook, LimitPodHardAntiAffinityTopology, LimitRanger, MutatingAdmissionPolicy, MutatingAdmissionWebhook, NamespaceAutoProvision, NamespaceExists, NamespaceLifecycle, NodeRestriction, OwnerReferencesPermissionEnforcement, PersistentVolumeClaimResize, PodNodeSelector, PodSecurity, PodTolerationRestriction, PodTopologyLabels, Priority, ResourceQuota, RuntimeClass, ServiceAccount, StorageObjectInUseProtection, TaintNodesByCondition, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook. Their order here does not matter. Capstan accepts but does not implement (they have no effect): ClusterTrustBundleAttest, DenyServiceExternalIPs, EventRateLimit, ExtendedResourceToleration, ImagePolicyWebhook, LimitPodHardAntiAffinityTopology, NamespaceAutoProvision, NamespaceExists, OwnerReferencesPermissionEnforcement, PodNodeSelector, PodTolerationRestriction, PodTopologyLabels, MutatingAdmissionPolicy.',
  },
  {
    section: ADMISSION,
    name: 'disable-admission-plugins',
    type: 'stringSlice',
    default: [],
    usage:
      'Plugins to turn off even though they are on by default (see --enable-admission-plugins for both lists). Their order here does not matter. Disabling NamespaceLifecycle lets content be created in missing or terminating namespaces and the system namespaces be deleted, as in kube.',
  },
  {
    section: ADMISSION,
    name: 'admission-control-config-file',
    type: 'string',
    default: '',
    usage:
      'Admission configuration file: an AdmissionConfiguration (apiserver.config.k8s.io/v1) whose plugins carry a configuration inline or a path relative to this file (PodSecurity reads a PodSecurityConfiguration).',
  },

  // Misc
  {
    section: MISC,
    name: 'allow-privileged',
    type: 'bool',
    default: false,
    usage: 'If true, privileged containers are allowed.',
    ...later,
  },
  {
    section: MISC,
    name: 'service-cluster-ip-range',
    type: 'string',
    default: '',
    usage:
      'CIDR ranges (at most two, dual-stack) that Service cluster IPs are allocated from. Unset: 10.0.0.0/24. Served as the "kubernetes" ServiceCIDR; each allocated IP is an IPAddress object.',
  },
  {
    section: MISC,
    name: 'service-node-port-range',
    type: 'string',
    default: '30000-32767',
    usage: 'Ports set aside for NodePort Services, N1-N2, both ends included.',
  },
  {
    section: MISC,
    name: 'feature-gates',
    type: 'mapStringBool',
    default: {},
    usage: 'key=value pairs that switch alpha and experimental features on or off.',
    ...later,
  },
  {
    section: MISC,
    name: 'proxy-client-cert-file',
    type: 'string',
    default: '',
    usage:
      'Client certificate the server presents when it calls other servers while handling a request. Capstan presents it to the servers of remote APIServices (with the identity in the --requestheader-*-headers headers).',
  },
  {
    section: MISC,
    name: 'proxy-client-key-file',
    type: 'string',
    default: '',
    usage: 'Private key of the --proxy-client-cert-file certificate.',
  },
  {
    section: MISC,
    name: 'enable-aggregator-routing',
    type: 'bool',
    default: false,
    usage:
      'Makes the aggregator send requests to endpoint IPs instead of the cluster IP. Capstan has no kube-proxy and always routes to endpoint IPs; the flag changes nothing.',
    ...later,
  },
  {
    section: MISC,
    name: 'endpoint-reconciler-type',
    type: 'string',
    default: 'lease',
    usage:
      'Which endpoint reconciler to use: master-count, lease or none. lease: each server keeps a storage lease on its address and the kubernetes endpoints list the live ones.',
  },
  {
    section: MISC,
    name: 'apiserver-count',
    type: 'int',
    default: 1,
    usage:
      'The number of API servers running in the cluster; used by --endpoint-reconciler-type=master-count only.',
  },
  {
    section: MISC,
    name: 'kubelet-client-certificate',
    type: 'string',
    default: '',
    usage: 'Client certificate file for TLS connections to kubelets.',
  },
  {
    section: MISC,
    name: 'kubelet-client-key',
    type: 'string',
    default: '',
    usage: 'Client key file for TLS connections to kubelets.',
  },
  {
    section: MISC,
    name: 'kubelet-certificate-authority',
    type: 'string',
    default: '',
    usage: 'CA certificate file for verifying kubelets.',
  },
  {
    section: MISC,
    name: 'kubelet-preferred-address-types',
    type: 'stringSlice',
    default: ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'],
    usage:
      'List of the preferred NodeAddressTypes to use for kubelet connections. `capstan cluster` puts InternalIP first, as kubeadm does: its node registers under a name that need not resolve.',
  },
  {
    section: MISC,
    name: 'enable-garbage-collector',
    type: 'bool',
    default: true,
    usage: 'Turns on the generic garbage collector.',
    ...later,
  },
  {
    section: MISC,
    name: 'profiling',
    type: 'bool',
    default: true,
    usage: 'Serves profiling data over HTTP at host:port/debug/pprof/.',
  },

  // Logs
  {
    section: LOGS,
    name: 'v',
    shorthand: 'v',
    type: 'int',
    default: 0,
    usage: 'Log verbosity level.',
    ...later,
  },
  {
    section: LOGS,
    name: 'vmodule',
    type: 'stringSlice',
    default: [],
    usage: 'pattern=N settings, comma separated, giving a log level per file.',
    ...later,
  },

  // Metrics
  {
    section: METRICS,
    name: 'disabled-metrics',
    type: 'stringSlice',
    default: [],
    usage:
      'Metric names (fully qualified, e.g. apiserver_request_total) to turn off: they are neither recorded nor served at /metrics. Turning off every request or flow-control family also takes its per-request recording off the request path.',
  },

  // Capstan
  {
    section: CAPSTAN,
    name: 'controllers',
    type: 'stringSlice',
    default: ['*'],
    usage:
      "The in-process controllers to run, with kube-controller-manager's syntax: '*' runs every controller that is on by default, 'foo' turns on the controller named foo, '-foo' turns it off; an empty value runs none (a bare API server, as kube-apiserver is). The names are kube-controller-manager's (canonical or alias; capstan controller-manager runs the same set, and the same ones are off unless named, such as token-cleaner-controller), plus 'scheduler' for the in-process scheduler. kube-apiserver's own start-up work (system namespaces, bootstrap RBAC policy, priority and fairness, the kubernetes Service, cluster IP repair) always runs.",
  },
  {
    section: CAPSTAN,
    name: 'data-dir',
    type: 'string',
    default: '.capstan',
    usage:
      'Directory for Capstan state: the embedded store (<data-dir>/store, used when --etcd-servers is empty) and the admin kubeconfig (<data-dir>/admin.kubeconfig). Relative to the working directory.',
  },
];
