import { BaseClient } from "./base.js";
export class GitClient extends BaseClient {
  name = "git";
}
