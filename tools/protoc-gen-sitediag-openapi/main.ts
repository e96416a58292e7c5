import { runNodeJs } from "@bufbuild/protoplugin";
import { protocGenSitediagOpenapi } from "./plugin.js";

// Entry point buf runs (see buf.gen.yaml): node --import tsx main.ts.
runNodeJs(protocGenSitediagOpenapi);
