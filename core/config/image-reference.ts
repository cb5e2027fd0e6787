/**
 * The grammar of a container image reference as the kubelet reads it: distribution's reference grammar
 * (`distribution/reference` regexp.go: name, tag, digest; the name at most 255 characters) and, for a digest, the
 * go-digest rule containerd and the kubelet apply (`opencontainers/go-digest` Digest.Validate: a registered algorithm,
 * sha256, sha384 or sha512, and exactly its length of lowercase hex). A reference the kubelet would refuse to pull
 * (ErrImageInspect / InvalidImageName) is refused here, before any pod is made.
 */

/** One domain component: letters and digits, `-` inside. */
const DOMAIN_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
/** A registry host: a domain name, or an IPv6 address in brackets; then an optional port. */
const DOMAIN = new RegExp(`^(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9A-Fa-f:]+\\])(?::[0-9]+)?$`);
/** One path component: lowercase letters and digits, joined by `.`, `_`, `__` or runs of `-`. */
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
/** A tag: a word character, then up to 127 of word characters, `.` and `-`. */
const TAG = /^[\w][\w.-]{0,127}$/;

/** The digest algorithms go-digest registers, with the length of their hex encoding. */
const DIGEST_HEX_LENGTH: Readonly<Record<string, number>> = { sha256: 64, sha384: 96, sha512: 128 };

/** The longest name (registry and path) distribution accepts. */
const NAME_MAX = 255;

/** The form, for every message. */
export const IMAGE_REFERENCE_FORM =
  "[registry[:port]/]path[:tag][@sha256:<64 lowercase hex>] (path parts of lowercase letters and digits joined by " +
  "'.', '_', '__' or '-', separated by '/'; a tag of letters, digits, '_', '.' and '-', at most 128, not starting " +
  "with '.' or '-')";

/**
 * Whether the first part of a name is read as a registry host, as distribution's `splitDockerDomain` decides: it holds
 * a `.` or a `:`, or is `localhost`. (Later versions also take a part with an upper-case letter as a host; one is
 * refused here either way, as the path part it is to the older reader.)
 */
const isDomain = (part: string) => /[.:]/.test(part) || part === "localhost";

/**
 * {@link isDomain} as a regular-expression source: an optional registry host and its `/` in front of an image's path
 * (`docker.io/`, `123456789012.dkr.ecr.us-east-1.amazonaws.com/`, `localhost:5000/`), for patterns that recognise one
 * publisher's images behind any registry that mirrors them.
 */
export const OPTIONAL_REGISTRY_HOST = "(?:(?:[^/]*[.:][^/]*|localhost)/)?";

/** What is wrong with a digest (`algorithm:hex`), or undefined. */
function digestProblem(digest: string): string | undefined {
  const [algorithm = "", hex = "", ...rest] = digest.split(":");
  const length = DIGEST_HEX_LENGTH[algorithm];
  if (rest.length > 0 || length === undefined)
    return `its digest algorithm "${algorithm.slice(0, 40)}" is not one the kubelet verifies (sha256, sha384, sha512)`;
  if (!new RegExp(`^[0-9a-f]{${length}}$`).test(hex))
    return `its ${algorithm} digest must be exactly ${length} lowercase hex digits`;
  return undefined;
}

/** What is wrong with a name (`[registry/]path`), or undefined. */
function nameProblem(name: string): string | undefined {
  if (name.length > NAME_MAX) return `its name is longer than ${NAME_MAX} characters`;
  const parts = name.split("/");
  // A first part that is no host may still be a path part (`my_reg.io`): the reference grammar's domain is optional.
  const host = parts.length > 1 && isDomain(parts[0]!) && !PATH_COMPONENT.test(parts[0]!) ? parts.shift()! : undefined;
  if (host !== undefined && !DOMAIN.test(host)) return `its registry "${host.slice(0, 80)}" is not a host[:port]`;
  if (parts.length > 1 && DOMAIN.test(parts[0]!) && isDomain(parts[0]!)) parts.shift();
  const bad = parts.find((p) => !PATH_COMPONENT.test(p));
  return bad === undefined ? undefined : `its path part "${bad.slice(0, 80)}" is not lowercase letters and digits`;
}

/** Why `image` is not a reference the kubelet can pull, with the form it must have, or undefined. */
export function imageReferenceProblem(image: string): string | undefined {
  // distribution's ParseNormalizedNamed refuses a bare 64-hex string: an image ID, not a name.
  if (/^[a-f0-9]{64}$/.test(image))
    return `is an image ID, not a reference: an image reference is ${IMAGE_REFERENCE_FORM}`;
  const at = image.indexOf("@");
  const [named, digest] = at < 0 ? [image, undefined] : [image.slice(0, at), image.slice(at + 1)];
  const slash = named.lastIndexOf("/");
  const colon = named.lastIndexOf(":");
  const [name, tag] = colon > slash ? [named.slice(0, colon), named.slice(colon + 1)] : [named, undefined];
  const problem =
    (digest === undefined ? undefined : digestProblem(digest)) ??
    (tag === undefined || TAG.test(tag) ? undefined : `its tag "${tag.slice(0, 140)}" is not a tag`) ??
    nameProblem(name);
  return problem === undefined ? undefined : `${problem}: an image reference is ${IMAGE_REFERENCE_FORM}`;
}
