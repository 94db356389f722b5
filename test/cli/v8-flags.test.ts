import { describe, expect, it } from 'vitest';
import { isBareServer, isOnEtcd, isSimulatedAgent, v8FlagsOf } from '../../src/cli/v8-flags.js';
import { COMPONENT_BUNDLES } from '../../src/cli/bundles.js';

describe('v8FlagsOf', () => {
  it('leaves a bare API server and the one-shot commands on V8 defaults', () => {
    for (const command of ['bench', 'verify', 'version', 'images', undefined]) {
      expect(v8FlagsOf(command, [])).toEqual([]);
    }
    expect(v8FlagsOf('server', ['--controllers='])).toEqual([]);
    expect(v8FlagsOf('server', ['--etcd-servers=http://e:2379', '--controllers', ''])).toEqual([]);
    expect(v8FlagsOf('cluster', ['--controllers='])).toEqual([]);
  });

  it('leaves a server on etcd on V8 defaults, with or without in-process components', () => {
    expect(v8FlagsOf('server', ['--etcd-servers=https://10.0.0.1:2379'])).toEqual([]);
    expect(v8FlagsOf('server', ['--etcd-servers', 'http://a:2379,http://b:2379'])).toEqual([]);
    expect(v8FlagsOf('cluster', ['--etcd-servers=http://a:2379'])).toEqual([]);
    expect(isOnEtcd(['--etcd-servers='])).toBe(false);
    expect(isOnEtcd([])).toBe(false);
  });

  it('halves the heap growth of a single-node server that runs the control plane in-process', () => {
    for (const command of ['server', 'cluster']) {
      expect(v8FlagsOf(command, [])).toEqual(['--heap-growing-percent=50']);
      expect(v8FlagsOf(command, ['--controllers=*,-scheduler'])).toEqual(['--heap-growing-percent=50']);
      expect(v8FlagsOf(command, ['--controllers', 'scheduler'])).toEqual(['--heap-growing-percent=50']);
    }
  });

  it('tells a bare server apart, the last --controllers winning', () => {
    expect(isBareServer([])).toBe(false);
    expect(isBareServer(['--controllers='])).toBe(true);
    expect(isBareServer(['--controllers= '])).toBe(true);
    expect(isBareServer(['--controllers=', '--controllers=*'])).toBe(false);
    expect(isBareServer(['--controllers=*', '--controllers'])).toBe(true);
  });

  it('lets no long-running component heap grow past twice its live size', () => {
    for (const command of Object.keys(COMPONENT_BUNDLES)) {
      const growth = v8FlagsOf(command, [])
        .filter((f) => f.startsWith('--heap-growing-percent='))
        .map((f) => Number(f.split('=')[1]));
      expect(growth.length, command).toBeGreaterThan(0);
      // The last setting wins; it must not exceed Go's GOGC=100.
      expect(growth.at(-1), command).toBeLessThanOrEqual(100);
    }
  });

  it('keeps the scheduler at 25% growth', () => {
    const flags = v8FlagsOf('scheduler', []);
    expect(flags.filter((f) => f.startsWith('--heap-growing-percent='))).toEqual([
      '--heap-growing-percent=25',
    ]);
    expect(flags).toContain('--semi-space-growth-factor=1');
    expect(flags).toContain('--optimize-for-size');
  });

  it('turns both compilers off for the real agent, and only the optimizing one for the simulated agent', () => {
    expect(v8FlagsOf('agent', ['--kubeconfig=x'])).toContain('--no-opt');
    expect(v8FlagsOf('agent', ['--kubeconfig=x'])).toContain('--no-sparkplug');
    expect(v8FlagsOf('agent', ['--simulate'])).not.toContain('--no-sparkplug');
    expect(v8FlagsOf('agent', ['--simulate=true', '--nodes=5'])).toEqual([
      '--heap-growing-percent=50',
      '--semi-space-growth-factor=1',
      '--optimize-for-size',
      '--no-opt',
    ]);
  });

  it('tells the simulated agent apart', () => {
    expect(isSimulatedAgent(['--simulate'])).toBe(true);
    expect(isSimulatedAgent(['--simulate=true'])).toBe(true);
    expect(isSimulatedAgent(['--simulate=false'])).toBe(false);
    expect(isSimulatedAgent([])).toBe(false);
  });
});
