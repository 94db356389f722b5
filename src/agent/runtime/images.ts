/**
 * Image pulls as kubelet makes them: by `imagePullPolicy` (Always, IfNotPresent, Never; the
 * default is Always for `:latest` or no tag, IfNotPresent otherwise), with the pod's pull
 * secrets as CRI auth, kubelet's events, and a per-image back-off after a failure
 * (ImagePullBackOff, 10 s doubling to 5 min).
 */
import type { Container, Pod } from '../../api/types/core-v1.js';
import type { CriClient } from '../cri/client.js';
import type { AuthConfig } from '../cri/types.js';
import { Backoff } from '../pod/backoff.js';
import { containerFieldPath, Reasons, type EventSink } from '../pod/events.js';

/** Why a container cannot start for its image: kubelet's waiting reasons. */
export class ImageError extends Error {
  readonly reason: 'ErrImagePull' | 'ImagePullBackOff' | 'ErrImageNeverPull' | 'InvalidImageName';
  constructor(reason: ImageError['reason'], message: string) {
    super(message);
    this.name = 'ImageError';
    this.reason = reason;
  }
}

/** The effective pull policy of a container. */
export function pullPolicy(c: Container): string {
  if (c.imagePullPolicy) return c.imagePullPolicy;
  const image = c.image ?? '';
  const ref = image.split('@')[0] ?? '';
  const tag = ref.lastIndexOf(':') > ref.lastIndexOf('/') ? ref.slice(ref.lastIndexOf(':') + 1) : '';
  return !image.includes('@') && (tag === '' || tag === 'latest') ? 'Always' : 'IfNotPresent';
}

/** Pulls images for containers; one instance per agent. */
export class ImageManager {
  readonly #cri: CriClient;
  readonly #events: EventSink;
  readonly #backoff = new Backoff();
  readonly #failedAt = new Map<string, number>();

  constructor(cri: CriClient, events: EventSink) {
    this.#cri = cri;
    this.#events = events;
  }

  /**
   * Makes sure the container's image is present; answers the image reference to create with.
   * @throws ImageError with kubelet's reason when it is not and cannot be pulled now.
   */
  async ensure(pod: Pod, c: Container, auths: readonly AuthConfig[] = []): Promise<string> {
    const image = c.image ?? '';
    const fieldPath = containerFieldPath(pod, c.name ?? '');
    if (!image) throw new ImageError('InvalidImageName', 'container has no image');
    const policy = pullPolicy(c);
    const present = await this.#cri.imageStatus(image);
    if (present && policy !== 'Always') {
      this.#events.event(
        pod,
        'Normal',
        Reasons.Pulled,
        `Container image "${image}" already present on machine`,
        fieldPath,
      );
      return present.id;
    }
    if (policy === 'Never') {
      const msg = `Container image "${image}" is not present with pull policy of Never`;
      this.#events.event(pod, 'Warning', 'ErrImageNeverPull', msg, fieldPath);
      throw new ImageError('ErrImageNeverPull', msg);
    }
    const key = `${image}`;
    const failedAt = this.#failedAt.get(key);
    if (failedAt !== undefined && this.#backoff.remaining(key, failedAt) > 0) {
      this.#events.event(pod, 'Normal', Reasons.BackOff, `Back-off pulling image "${image}"`, fieldPath);
      this.#events.event(pod, 'Warning', Reasons.Failed, 'Error: ImagePullBackOff', fieldPath);
      throw new ImageError('ImagePullBackOff', `Back-off pulling image "${image}"`);
    }
    this.#events.event(pod, 'Normal', Reasons.Pulling, `Pulling image "${image}"`, fieldPath);
    const start = Date.now();
    let lastErr: unknown;
    for (const auth of auths.length > 0 ? auths : [undefined]) {
      try {
        const ref = await this.#cri.pullImage(image, auth);
        const secs = ((Date.now() - start) / 1000).toFixed(3);
        const size = (await this.#cri.imageStatus(image))?.size ?? '0';
        this.#events.event(
          pod,
          'Normal',
          Reasons.Pulled,
          `Successfully pulled image "${image}" in ${secs}s (${secs}s including waiting). Image size: ${size} bytes.`,
          fieldPath,
        );
        this.#failedAt.delete(key);
        return ref;
      } catch (err) {
        lastErr = err;
      }
    }
    const now = Date.now();
    this.#backoff.next(key, now);
    this.#failedAt.set(key, now);
    const detail = lastErr instanceof Error ? lastErr.message : String(lastErr);
    this.#events.event(
      pod,
      'Warning',
      Reasons.Failed,
      `Failed to pull image "${image}": ${detail}`,
      fieldPath,
    );
    this.#events.event(pod, 'Warning', Reasons.Failed, 'Error: ErrImagePull', fieldPath);
    throw new ImageError('ErrImagePull', `failed to pull and unpack image "${image}": ${detail}`);
  }

  /** Milliseconds until an image in back-off may be pulled again (0 when not in back-off). */
  backoffRemaining(image: string): number {
    const failedAt = this.#failedAt.get(image);
    return failedAt === undefined ? 0 : this.#backoff.remaining(image, failedAt);
  }
}
