// The environment tool processes get: rune's own, minus anything whose name looks secret (unless
// sandbox.env_passthrough names it) and minus rune's own settings.
const SECRET_NAME = /KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION/i;

export function toolEnvironment(
  env: NodeJS.ProcessEnv,
  passthrough: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (passthrough.includes(name)) {
      out[name] = value;
      continue;
    }
    if (SECRET_NAME.test(name) || name.startsWith('RUNE_')) continue;
    // `cd NAME` searches CDPATH first: the policy judges cd targets relative to the working directory.
    if (name === 'CDPATH') continue;
    out[name] = value;
  }
  return out;
}
