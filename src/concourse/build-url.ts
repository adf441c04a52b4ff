// The build a step belongs to, as a link for its metadata. Concourse does not set BUILD_URL; it
// gives the external URL of its web node and the build's names, and its UI addresses a job's build
// as /teams/T/pipelines/P/jobs/J/builds/N (with ?vars.K=JSON for an instanced pipeline) and a
// one-off build as /builds/ID. Pure: the environment is passed in.

/** Concourse's URL of the build running this step, or undefined when the variables do not say. */
export function buildUrl(env: NodeJS.ProcessEnv): string | undefined {
  const base = env.ATC_EXTERNAL_URL?.trim().replace(/\/+$/, '');
  if (base && /^https?:\/\//i.test(base)) {
    const { BUILD_TEAM_NAME: team, BUILD_PIPELINE_NAME: pipeline, BUILD_JOB_NAME: job } = env;
    const name = env.BUILD_NAME;
    if (team && pipeline && job && name) {
      const path = [team, pipeline, job, name].map(encodeURIComponent);
      return `${base}/teams/${path[0]}/pipelines/${path[1]}/jobs/${path[2]}/builds/${path[3]}${instanceQuery(env.BUILD_PIPELINE_INSTANCE_VARS)}`;
    }
    if (env.BUILD_ID && /^\d+$/.test(env.BUILD_ID)) return `${base}/builds/${env.BUILD_ID}`;
  }
  // Outside Concourse (or a wrapper that sets it), a BUILD_URL given as is.
  return env.BUILD_URL || undefined;
}

/** `?vars.branch=%22main%22&vars.env.region=%22eu%22`: each instance var as JSON, nested keys dotted. */
function instanceQuery(json: string | undefined): string {
  if (!json) return '';
  let vars: unknown;
  try {
    vars = JSON.parse(json);
  } catch {
    return '';
  }
  if (typeof vars !== 'object' || vars === null || Array.isArray(vars)) return '';
  const pairs: string[] = [];
  const walk = (prefix: string, value: unknown): void => {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) walk(`${prefix}.${key}`, inner);
      return;
    }
    pairs.push(`${encodeURIComponent(prefix)}=${encodeURIComponent(JSON.stringify(value))}`);
  };
  for (const [key, value] of Object.entries(vars)) walk(`vars.${key}`, value);
  return pairs.length > 0 ? `?${pairs.join('&')}` : '';
}
