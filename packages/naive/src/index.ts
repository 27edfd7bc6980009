export { naive, NAIVE_BC } from './naive.js';
