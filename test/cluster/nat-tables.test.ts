/**
 * Which iptables nat tables a node's teardown may delete: only one it found absent and that now
 * holds nothing but iptables' empty base chains (what the portmap plugin's iptables calls make on
 * a host that had no nat table). The listings are `nft list table ip nat` as nftables prints them.
 */
import { describe, expect, it } from 'vitest';
import { onlyEmptyBaseChains } from '../../src/cluster/containerd-teardown.js';

const EMPTY = `table ip nat {
	chain POSTROUTING {
		type nat hook postrouting priority srcnat; policy accept;
	}

	chain PREROUTING {
		type nat hook prerouting priority dstnat; policy accept;
	}

	chain OUTPUT {
		type nat hook output priority -100; policy accept;
	}
}
`;

describe('the nat tables iptables made for the portmap plugin', () => {
  it('an empty table of base chains is unused', () => {
    expect(onlyEmptyBaseChains(EMPTY)).toBe(true);
    expect(onlyEmptyBaseChains(EMPTY.replace('table ip nat', 'table ip6 nat'))).toBe(true);
  });

  it('a rule, a chain of anyone else, or a dropping policy keeps it', () => {
    const withRule = EMPTY.replace(
      'type nat hook postrouting priority srcnat; policy accept;',
      'type nat hook postrouting priority srcnat; policy accept;\n\t\tip saddr 10.1.0.0/16 counter packets 0 bytes 0 masquerade',
    );
    expect(onlyEmptyBaseChains(withRule)).toBe(false);
    const withChain = EMPTY.replace('}\n', '}\n\n\tchain CNI-HOSTPORT-DNAT {\n\t}\n');
    expect(onlyEmptyBaseChains(withChain)).toBe(false);
    expect(onlyEmptyBaseChains(EMPTY.replace('dstnat; policy accept;', 'dstnat; policy drop;'))).toBe(false);
  });
});
