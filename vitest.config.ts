import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'storage/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start servers and etcd on loopback ports; two cores, so keep parallelism modest.
    maxWorkers: 2,
  },
});
