/**
 * SVG files are imported as their text, for LabIcon.
 */
declare module '*.svg' {
  const svgText: string;
  export default svgText;
}
