# The Concourse resource image: the rune single executable at /opt/resource/rune, with check, in and
# out as symlinks (the invoked name picks the step). Build from the repository root:
#   docker build -t rune-resource .
FROM node:20-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build

FROM debian:12-slim
# ca-certificates: TLS to model providers and notes servers; git: what review prompts usually run.
# safe.directory: Concourse mounts a put's inputs owned by root (or by a uid other than rune's), and
# git refuses such a repository as of "dubious ownership"; those folders are the pipeline's own, and
# every git command the agent runs is inside rune's sandbox. (Debian 12's git 2.39 takes only '*'.)
# tests/e2e/concourse-image.test.ts builds this stage's root file system from these very lines.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --shell /usr/sbin/nologin rune \
 && git config --system --add safe.directory '*'
COPY --from=build --chmod=0755 /src/dist/rune /opt/resource/rune
RUN ln -s rune /opt/resource/check && ln -s rune /opt/resource/in && ln -s rune /opt/resource/out
# The image starts as root, so every volume layout works: Concourse mounts a step's folder owned by
# root (mode 0700 in the standard resource-test layout) or by the image's user. A step started as
# root becomes the owner of its folder (check: of HOME, so `rune`) before it reads or writes
# anything, and stays root only where root owns it; tools never hold a capability either way.
# Native addons and code caches go to $HOME/.rune/cache: a private, writable folder of `rune`.
USER root
ENV HOME=/home/rune
WORKDIR /home/rune
