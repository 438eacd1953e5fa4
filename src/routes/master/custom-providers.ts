import { Hono } from "hono";
import type { AppEnv } from "../../app-types";

export const customProviderRoutes = new Hono<AppEnv>();
