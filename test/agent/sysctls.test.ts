/**
 * Pod sysctls (src/agent/pod/sysctls.ts) against kubelet v1.33's sysctl admit handler
 * (pkg/kubelet/sysctl): the safe set by kernel version, `--allowed-unsafe-sysctls` names and
 * patterns, the host-namespace refusals, the slash form, and kubelet's messages.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core-v1.js';
import { resolveConfig, agentFlagSet } from '../../src/agent/config.js';
import { dottedSysctl, sandboxSysctls, SysctlAllowlist } from '../../src/agent/pod/sysctls.js';

const pod = (sysctls: Record<string, string>, spec: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u' },
  spec: {
    containers: [{ name: 'c', image: 'i' }],
    securityContext: { sysctls: Object.entries(sysctls).map(([name, value]) => ({ name, value })) },
    ...spec,
  },
});

describe('pod sysctls', () => {
  it('allows the safe set and refuses the rest with kubelet’s message', () => {
    const safe = new SysctlAllowlist([], '6.1.0');
    expect(
      safe.forbidden(pod({ 'kernel.shm_rmid_forced': '1', 'net.ipv4.tcp_rmem': '4096 87380 6291456' })),
    ).toBe(undefined);
    expect(safe.forbidden(pod({ 'kernel.msgmax': '10000' }))).toBe(
      'forbidden sysctl: "kernel.msgmax" not allowlisted',
    );
    expect(safe.forbidden(pod({}))).toBeUndefined();
  });

  it('keeps out the safe sysctls the running kernel does not namespace yet', () => {
    const old = new SysctlAllowlist([], '4.4.0-generic');
    expect(old.forbidden(pod({ 'net.ipv4.tcp_keepalive_time': '60' }))).toBe(
      'forbidden sysctl: "net.ipv4.tcp_keepalive_time" not allowlisted',
    );
    expect(old.forbidden(pod({ 'net.ipv4.ip_local_reserved_ports': '30000' }))).toBeUndefined();
  });

  it('takes --allowed-unsafe-sysctls names and patterns, in either separator form', () => {
    const list = new SysctlAllowlist(['kernel.msg*', 'net.core.somaxconn', 'fs/mqueue/*'], '6.1.0');
    expect(list.forbidden(pod({ 'kernel.msgmax': '1', 'net.core.somaxconn': '1024' }))).toBeUndefined();
    expect(list.forbidden(pod({ 'fs.mqueue.msg_max': '20' }))).toBeUndefined();
    expect(list.forbidden(pod({ 'net/core/somaxconn': '1024' }))).toBeUndefined();
    expect(list.forbidden(pod({ 'kernel.sem': '1 2 3 4' }))).toBe(
      'forbidden sysctl: "kernel.sem" not allowlisted',
    );
  });

  it('refuses a network sysctl on the host network and an IPC one on the host IPC', () => {
    const list = new SysctlAllowlist([], '6.1.0');
    expect(list.forbidden(pod({ 'net.ipv4.ip_local_port_range': '1024 65000' }, { hostNetwork: true }))).toBe(
      'forbidden sysctl: "net.ipv4.ip_local_port_range" not allowed with host Net enabled',
    );
    expect(list.forbidden(pod({ 'kernel.shm_rmid_forced': '1' }, { hostIPC: true }))).toBe(
      'forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled',
    );
    expect(list.forbidden(pod({ 'kernel.shm_rmid_forced': '1' }, { hostNetwork: true }))).toBeUndefined();
  });

  it('refuses an allowlist entry that is malformed or not namespaced, as kubelet fails to start', () => {
    expect(() => new SysctlAllowlist(['kernel.hostname'])).toThrow(
      'the sysctls "kernel.hostname" are not known to be namespaced',
    );
    expect(() => new SysctlAllowlist(['vm.*'])).toThrow('the sysctls "vm." are not known to be namespaced');
    expect(() => new SysctlAllowlist(['Net.Core'])).toThrow(
      /^sysctl "Net.Core" must have at most 253 characters/,
    );
    expect(() => resolveConfig(agentFlagSet().parse(['--allowed-unsafe-sysctls=kernel.hostname']))).toThrow(
      'invalid --allowed-unsafe-sysctls: the sysctls "kernel.hostname" are not known to be namespaced',
    );
    expect(
      resolveConfig(agentFlagSet().parse(['--allowed-unsafe-sysctls=net.*'])).allowedUnsafeSysctls,
    ).toEqual(['net.*']);
  });

  it('sends the sandbox the pod’s sysctls in the dotted form', () => {
    expect(dottedSysctl('net/ipv4/conf/eth0.100/rp_filter')).toBe('net.ipv4.conf.eth0/100.rp_filter');
    expect(dottedSysctl('net.ipv4.conf.eth0/100.rp_filter')).toBe('net.ipv4.conf.eth0/100.rp_filter');
    expect(
      sandboxSysctls(pod({ 'net/ipv4/ping_group_range': '0 1', 'kernel.shm_rmid_forced': '1' })),
    ).toEqual({
      'net.ipv4.ping_group_range': '0 1',
      'kernel.shm_rmid_forced': '1',
    });
  });
});
